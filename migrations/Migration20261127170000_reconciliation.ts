import { Migration } from '@mikro-orm/migrations';

/**
 * Missed-webhook reconciliation (decisions §15): per organisation and platform, the read-only
 * order-API credentials (sealed), where the API is, whether it runs or was paused by a refusal, the
 * high-water mark and the last run's result; and the source of each delivery log entry.
 */
export class Migration20261127170000_reconciliation extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "integration_reconciliation" ("organisation_id" uuid not null, "platform" text not null,
      "enabled" boolean not null, "api_base_url" text not null, "credentials" text not null,
      "paused_at" timestamptz null, "paused_reason" text null, "high_water_mark" timestamptz null,
      "last_run_at" timestamptz null, "last_result" jsonb null, "updated_at" timestamptz not null,
      constraint "integration_reconciliation_pkey" primary key ("organisation_id", "platform"));`);
    this.addSql(`alter table "integration_reconciliation" add constraint "integration_reconciliation_organisation_id_foreign"
      foreign key ("organisation_id") references "organisation" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "webhook_delivery" add column "source" text not null default 'webhook';`);
  }

  override async down(): Promise<void> {
    this.addSql('alter table "webhook_delivery" drop column "source";');
    this.addSql('drop table if exists "integration_reconciliation";');
  }
}
