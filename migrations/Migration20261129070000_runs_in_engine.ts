import { Migration } from '@mikro-orm/migrations';

/**
 * The mark of a webhook item whose run the dispatcher started or joined, and a partial index of the
 * items in the engine (marked, no outcome yet): the outbox's claims count them without reading an
 * organisation's backlog. Items in the engine when this runs are not marked: the claims count them
 * from their next start on, and meanwhile let a few more runs start.
 */
export class Migration20261129070000_runs_in_engine extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "webhook_delivery_item" add column "run_started_at" timestamptz null;`);
    this.addSql(`create index "webhook_delivery_item_in_engine_index" on "webhook_delivery_item" ("delivery_id") where "outcome" is null and "run_started_at" is not null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "webhook_delivery_item_in_engine_index";`);
    this.addSql(`alter table "webhook_delivery_item" drop column "run_started_at";`);
  }
}
