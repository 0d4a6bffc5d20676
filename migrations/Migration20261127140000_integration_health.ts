import { Migration } from '@mikro-orm/migrations';

/**
 * Integration health (decisions §15): per organisation and platform, the last verified delivery,
 * the last refusal and its reason, and 24 hourly slots of counts (a fixed size: nothing to prune).
 */
export class Migration20261127140000_integration_health extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "integration_health" ("organisation_id" uuid not null, "platform" text not null,
      "last_verified_at" timestamptz null, "last_refused_at" timestamptz null, "last_refusal_reason" text null,
      "hour_slots" int[] not null, "verified_slots" int[] not null, "refused_slots" int[] not null,
      constraint "integration_health_pkey" primary key ("organisation_id", "platform"));`);
    this.addSql(`alter table "integration_health" add constraint "integration_health_organisation_id_foreign"
      foreign key ("organisation_id") references "organisation" ("id") on update cascade on delete cascade;`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists "integration_health";');
  }
}
