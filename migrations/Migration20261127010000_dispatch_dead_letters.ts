import { Migration } from '@mikro-orm/migrations';

/**
 * Outbox rows the engine refused for good (or too often) stay as dead letters (`dead_at`) instead of
 * being retried forever; `refusals` counts the engine's "no" (not its absence) toward the cap. Claims
 * take rows per organisation, oldest first, among the rows still alive, and count the organisation's
 * runs in the engine from its Pending entries.
 */
export class Migration20261127010000_dispatch_dead_letters extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "workflow_dispatch" add column "dead_at" timestamptz null, add column "refusals" int not null default 0;`);
    this.addSql(`drop index if exists "workflow_dispatch_due_at_index";`);
    this.addSql(`create index "workflow_dispatch_live_index" on "workflow_dispatch" ("organisation_id", "due_at") where "dead_at" is null;`);
    this.addSql(`create index "webhook_delivery_pending_index" on "webhook_delivery" ("organisation_id") where "status" = 'Pending';`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "webhook_delivery_pending_index";`);
    this.addSql(`drop index if exists "workflow_dispatch_live_index";`);
    this.addSql(`create index "workflow_dispatch_due_at_index" on "workflow_dispatch" ("due_at");`);
    this.addSql(`alter table "workflow_dispatch" drop column "dead_at", drop column "refusals";`);
  }
}
