import { Migration } from '@mikro-orm/migrations';

/**
 * An endpoint's request slots, leased by the attempt that sends (decisions §13: at most 10 in
 * flight per endpoint across every worker process; each process's own line stays in front).
 */
export class Migration20261127090000_outbound_endpoint_lease extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "outbound_endpoint_lease" ("endpoint_id" uuid not null, "slot" int not null, "holder" uuid not null,
      "until" timestamptz not null, constraint "outbound_endpoint_lease_pkey" primary key ("endpoint_id", "slot"));`);
    this.addSql(`alter table "outbound_endpoint_lease" add constraint "outbound_endpoint_lease_endpoint_id_foreign"
      foreign key ("endpoint_id") references "webhook_endpoint" ("id") on update cascade on delete cascade;`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists "outbound_endpoint_lease";');
  }
}
