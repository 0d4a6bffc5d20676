import { Migration } from '@mikro-orm/migrations';

/**
 * Revocation, download limits and dispute evidence (decisions §9–§11): purchases can be revoked and
 * carry a download limit and the payment their refunds name; refunds that come before their order
 * wait in `revocation_notice`; delivery log entries have a kind; links remember how they were
 * issued; the activity log keeps staff actions and who did them.
 */
export class Migration20261126120000_revocation_and_limits extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "revocation_notice" ("id" uuid not null, "organisation_id" uuid not null, "source" text not null, "ref_kind" text not null, "order_ref" text not null, "product_id" uuid null, "reason" text not null, "created_at" timestamptz not null, constraint "revocation_notice_pkey" primary key ("id"));`);
    this.addSql(`create index "revocation_notice_organisation_id_source_order_ref_index" on "revocation_notice" ("organisation_id", "source", "order_ref");`);
    this.addSql(`alter table "revocation_notice" add constraint "revocation_notice_organisation_id_foreign" foreign key ("organisation_id") references "organisation" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "revocation_notice" add constraint "revocation_notice_product_id_foreign" foreign key ("product_id") references "product" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "organisation" add column "support_email" text null;`);
    this.addSql(`alter table "product" add column "download_limit" int null;`);
    this.addSql(`alter table "purchase" add column "payment_reference" text null, add column "revoked_at" timestamptz null, add column "revoke_reason" text null, add column "download_limit" int null, add column "downloads_counted_from" timestamptz null;`);
    this.addSql(`create index "purchase_organisation_id_source_payment_reference_index" on "purchase" ("organisation_id", "source", "payment_reference");`);
    this.addSql(`alter table "download_token" add column "issued_via" text not null default 'receipt';`);
    this.addSql(`alter table "activity_log_entry" add column "actor" text null, add column "detail" text null;`);
    this.addSql(`alter table "webhook_delivery" add column "kind" text not null default 'order';`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "revocation_notice" cascade;`);
    this.addSql(`alter table "organisation" drop column "support_email";`);
    this.addSql(`alter table "product" drop column "download_limit";`);
    this.addSql(`drop index "purchase_organisation_id_source_payment_reference_index";`);
    this.addSql(`alter table "purchase" drop column "payment_reference", drop column "revoked_at", drop column "revoke_reason", drop column "download_limit", drop column "downloads_counted_from";`);
    this.addSql(`alter table "download_token" drop column "issued_via";`);
    this.addSql(`alter table "activity_log_entry" drop column "actor", drop column "detail";`);
    this.addSql(`alter table "webhook_delivery" drop column "kind";`);
  }
}
