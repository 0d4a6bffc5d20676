import { Migration } from '@mikro-orm/migrations';

/**
 * Download limits per purchase and bounded download writes (security review, issue 23, M2–M3):
 * coverage is kept per purchase and file (not per link), with the bytes sent since the last re-arm
 * (the byte budget); a page open counts its repeats within a minute instead of adding rows; the
 * purchase's activity is read by purchase, kind and time (limits, de-duplication, paged evidence).
 * Coverage of links is merged into their purchase's; no bytes were counted before, so none are now.
 */
export class Migration20261127030000_purchase_download_ledger extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "download_coverage" rename to "download_coverage_by_token";`);
    this.addSql(`alter table "download_coverage_by_token" rename constraint "download_coverage_pkey" to "download_coverage_by_token_pkey";`);
    this.addSql(`alter index "download_coverage_updated_at_index" rename to "download_coverage_by_token_updated_at_index";`);
    this.addSql(`create table "download_coverage" ("purchase_id" uuid not null, "file_id" uuid not null, "served" int8multirange not null, "bytes_sent" bigint not null default 0, "updated_at" timestamptz not null, constraint "download_coverage_pkey" primary key ("purchase_id", "file_id"));`);
    this.addSql(`create index "download_coverage_updated_at_index" on "download_coverage" ("updated_at");`);
    this.addSql(`insert into "download_coverage" ("purchase_id", "file_id", "served", "updated_at")
      select t."purchase_id", c."file_id", range_agg(c."served"), max(c."updated_at")
      from "download_coverage_by_token" c join "download_token" t on t."id" = c."token_id"
      group by t."purchase_id", c."file_id";`);
    this.addSql(`drop table "download_coverage_by_token";`);
    this.addSql(`alter table "activity_log_entry" add column "occurrences" int not null default 1;`);
    this.addSql(`create index "activity_log_entry_purchase_id_kind_created_at_index" on "activity_log_entry" ("purchase_id", "kind", "created_at");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "activity_log_entry_purchase_id_kind_created_at_index";`);
    this.addSql(`alter table "activity_log_entry" drop column "occurrences";`);
    // Coverage per link cannot be rebuilt from coverage per purchase: unfinished transfers start over.
    this.addSql(`drop table if exists "download_coverage" cascade;`);
    this.addSql(`create table "download_coverage" ("token_id" uuid not null, "file_id" uuid not null, "served" int8multirange not null, "updated_at" timestamptz not null, constraint "download_coverage_pkey" primary key ("token_id", "file_id"));`);
    this.addSql(`create index "download_coverage_updated_at_index" on "download_coverage" ("updated_at");`);
  }
}
