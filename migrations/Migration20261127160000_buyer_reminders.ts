import { Migration } from '@mikro-orm/migrations';

/**
 * The unclaimed-purchase reminder (decisions §16): how long after its receipt an organisation's
 * purchase without a completed transfer is reminded (on by default, a day; null: off), and when the
 * reminder of a purchase is due, fixed when its receipt was accepted (null: none was planned).
 * Existing organisations get the default; purchases whose receipts went before this get none.
 */
export class Migration20261127160000_buyer_reminders extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "organisation" add column "reminder_after_minutes" int null default 1440;`);
    this.addSql(`alter table "purchase" add column "reminder_due_at" timestamptz null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "purchase" drop column "reminder_due_at";`);
    this.addSql(`alter table "organisation" drop column "reminder_after_minutes";`);
  }
}
