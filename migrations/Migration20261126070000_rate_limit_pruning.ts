import { Migration } from '@mikro-orm/migrations';

/** Expired rate-limit counters are deleted by housekeeping: an index on the window's end. */
export class Migration20261126070000_rate_limit_pruning extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index "rate_limit_counter_reset_at_index" on "rate_limit_counter" ("reset_at");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "rate_limit_counter_reset_at_index";`);
  }
}
