import { Migration } from '@mikro-orm/migrations';

/** Byte ranges served per link and file since the last completed transfer (the download ledger). */
export class Migration20261126080000_download_coverage extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "download_coverage" ("token_id" uuid not null, "file_id" uuid not null, "served" int8multirange not null, "updated_at" timestamptz not null, constraint "download_coverage_pkey" primary key ("token_id", "file_id"));`);
    this.addSql(`create index "download_coverage_updated_at_index" on "download_coverage" ("updated_at");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "download_coverage" cascade;`);
  }
}
