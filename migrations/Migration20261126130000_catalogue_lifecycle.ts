import { Migration } from '@mikro-orm/migrations';

/**
 * Catalogue lifecycle (decisions §12): an unmatched line keeps what its delivery needs once its SKU
 * is mapped; "notify buyers" is one row per version; customers can turn update notices off.
 */
export class Migration20261126130000_catalogue_lifecycle extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "version_notification" ("id" uuid not null, "organisation_id" uuid not null, "product_id" uuid not null, "version_id" uuid not null, "total" int not null default 0, "started_by" text null, "workflow_id" text not null, "created_at" timestamptz not null, "completed_at" timestamptz null, constraint "version_notification_pkey" primary key ("id"));`);
    this.addSql(`alter table "version_notification" add constraint "version_notification_version_id_unique" unique ("version_id");`);
    this.addSql(`alter table "version_notification" add constraint "version_notification_organisation_id_foreign" foreign key ("organisation_id") references "organisation" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "version_notification" add constraint "version_notification_product_id_foreign" foreign key ("product_id") references "product" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "version_notification" add constraint "version_notification_version_id_foreign" foreign key ("version_id") references "product_version" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "customer" add column "update_notices_off_at" timestamptz null, add column "notice_token" text null;`);
    this.addSql(`alter table "customer" add constraint "customer_notice_token_unique" unique ("notice_token");`);
    this.addSql(`alter table "webhook_delivery_item" add column "held_line" jsonb null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "version_notification" cascade;`);
    this.addSql(`alter table "customer" drop column "update_notices_off_at", drop column "notice_token";`);
    this.addSql(`alter table "webhook_delivery_item" drop column "held_line";`);
  }
}
