import { Migration } from '@mikro-orm/migrations';

/**
 * A webhook item whose run was in the engine (`run_started_at` set) gets its outcome: its place in
 * the engine's budget is free, and every API process's dispatcher hears it at the commit
 * (`NOTIFY engine_place_freed`, src/temporal/engine-places). In the database, so every path that
 * ends such an item says it, in the transaction that ends it, with no statement of its own.
 */
export class Migration20261129150000_freed_place_notify extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create or replace function "notify_engine_place_freed"() returns trigger language plpgsql as $$
      begin
        perform pg_notify('engine_place_freed', '');
        return null;
      end $$;`);
    this.addSql(`create trigger "webhook_delivery_item_frees_engine_place" after update of "outcome" on "webhook_delivery_item"
      for each row when (old."outcome" is null and new."outcome" is not null and new."run_started_at" is not null)
      execute function "notify_engine_place_freed"();`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop trigger if exists "webhook_delivery_item_frees_engine_place" on "webhook_delivery_item";`);
    this.addSql(`drop function if exists "notify_engine_place_freed"();`);
  }
}
