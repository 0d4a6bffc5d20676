import { Migration } from '@mikro-orm/migrations';

/**
 * A transfer started and not finished holds its place under the purchase's download limit
 * (src/downloads/download-store.ts): without it, transfers of different files started at once each
 * passed a count none of them had yet added to. Coverage with bytes served and not yet a whole
 * file is such a transfer.
 */
export class Migration20261208020000_open_transfers_hold_a_place extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "download_coverage" add column "transfer_open" boolean not null default false;`);
    this.addSql(`update "download_coverage" set "transfer_open" = true where not isempty("served");`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "download_coverage" drop column "transfer_open";`);
  }
}
