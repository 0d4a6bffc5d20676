import { Migration } from '@mikro-orm/migrations';

/**
 * An index of the webhook items by when their run was started: the outbox's claims count the runs
 * each organisation started lately (the last DISPATCH_FAIRNESS_WINDOW) to give a place that frees.
 */
export class Migration20261129100000_recent_run_starts extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index "webhook_delivery_item_run_started_index" on "webhook_delivery_item" ("run_started_at") where "run_started_at" is not null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "webhook_delivery_item_run_started_index";`);
  }
}
