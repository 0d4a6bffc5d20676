import { Migration } from '@mikro-orm/migrations';

/** The transactional outbox of workflow starts and signals (decisions §4, amended 2026-11-26). */
export class Migration20261126030000_workflow_dispatch extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "workflow_dispatch" ("id" uuid not null, "organisation_id" uuid null, "kind" text not null, "workflow_id" text not null, "payload" jsonb not null, "created_at" timestamptz not null, "due_at" timestamptz not null, "attempts" int not null default 0, "last_error" text null, constraint "workflow_dispatch_pkey" primary key ("id"));`);
    this.addSql(`create index "workflow_dispatch_due_at_index" on "workflow_dispatch" ("due_at");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "workflow_dispatch" cascade;`);
  }
}
