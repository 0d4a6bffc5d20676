import { Migration } from '@mikro-orm/migrations';

export class Migration20261125215312_initial extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "organisation" ("id" uuid not null, "name" text not null, "subscription_expires_on" date null, "created_at" timestamptz not null, constraint "organisation_pkey" primary key ("id"));`);

    this.addSql(`create table "integration" ("id" uuid not null, "organisation_id" uuid not null, "platform" text not null, "secret" text null, "private_key" text null, "account_id" text null, "updated_at" timestamptz not null, constraint "integration_pkey" primary key ("id"));`);
    this.addSql(`create index "integration_account_id_index" on "integration" ("account_id");`);
    this.addSql(`alter table "integration" add constraint "integration_organisation_id_platform_unique" unique ("organisation_id", "platform");`);

    this.addSql(`create table "customer" ("id" uuid not null, "organisation_id" uuid not null, "email" text not null, "name" text not null default '', "created_at" timestamptz not null, constraint "customer_pkey" primary key ("id"));`);
    this.addSql(`alter table "customer" add constraint "customer_organisation_id_email_unique" unique ("organisation_id", "email");`);

    this.addSql(`create table "product" ("id" uuid not null, "organisation_id" uuid not null, "name" text not null, "slug" text not null, "description" text not null default '', "status" text not null default 'draft', "active_version_id" uuid null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "product_pkey" primary key ("id"));`);
    this.addSql(`alter table "product" add constraint "product_organisation_id_slug_unique" unique ("organisation_id", "slug");`);

    this.addSql(`create table "product_version" ("id" uuid not null, "product_id" uuid not null, "version" text not null, "status" text not null default 'ready', "created_at" timestamptz not null, constraint "product_version_pkey" primary key ("id"));`);
    this.addSql(`alter table "product_version" add constraint "product_version_product_id_version_unique" unique ("product_id", "version");`);

    this.addSql(`create table "product_sku" ("id" uuid not null, "organisation_id" uuid not null, "product_id" uuid not null, "sku" text not null, "is_slug" boolean not null, constraint "product_sku_pkey" primary key ("id"));`);
    this.addSql(`create index "product_sku_product_id_index" on "product_sku" ("product_id");`);
    this.addSql(`alter table "product_sku" add constraint "product_sku_organisation_id_sku_unique" unique ("organisation_id", "sku");`);

    this.addSql(`create table "purchase" ("id" uuid not null, "organisation_id" uuid not null, "product_id" uuid not null, "version_id" uuid null, "customer_id" uuid not null, "amount" numeric(20,4) not null, "currency" text not null, "payment_method" text not null, "source" text not null, "external_order_id" text null, "test" boolean not null default false, "receipt_status" text not null default 'pending', "receipt_sent_at" timestamptz null, "created_at" timestamptz not null, constraint "purchase_pkey" primary key ("id"));`);
    this.addSql(`create index "purchase_customer_id_index" on "purchase" ("customer_id");`);
    this.addSql(`create index "purchase_organisation_id_created_at_index" on "purchase" ("organisation_id", "created_at");`);
    this.addSql(`alter table "purchase" add constraint "purchase_organisation_id_source_external_order_id_2d817_unique" unique ("organisation_id", "source", "external_order_id", "product_id");`);

    this.addSql(`create table "download_token" ("id" uuid not null, "purchase_id" uuid not null, "token_hash" text not null, "expires_at" timestamptz not null, "used_at" timestamptz null, "created_at" timestamptz not null, constraint "download_token_pkey" primary key ("id"));`);
    this.addSql(`create index "download_token_purchase_id_index" on "download_token" ("purchase_id");`);
    this.addSql(`alter table "download_token" add constraint "download_token_token_hash_unique" unique ("token_hash");`);

    this.addSql(`create table "rate_limit_counter" ("key" text not null, "count" int not null, "reset_at" timestamptz not null, constraint "rate_limit_counter_pkey" primary key ("key"));`);

    this.addSql(`create table "sent_email" ("id" uuid not null, "organisation_id" uuid null, "kind" text not null, "business_key" text not null, "recipients" jsonb not null, "subject" text not null, "status" text not null default 'sending', "message_id" text null, "error" text null, "created_at" timestamptz not null, "sent_at" timestamptz null, constraint "sent_email_pkey" primary key ("id"));`);
    this.addSql(`alter table "sent_email" add constraint "sent_email_business_key_unique" unique ("business_key");`);

    this.addSql(`create table "unmatched_sku" ("id" uuid not null, "organisation_id" uuid not null, "platform" text not null, "sku" text not null, "count" int not null default 0, "last_seen_at" timestamptz not null, constraint "unmatched_sku_pkey" primary key ("id"));`);
    this.addSql(`alter table "unmatched_sku" add constraint "unmatched_sku_organisation_id_platform_sku_unique" unique ("organisation_id", "platform", "sku");`);

    this.addSql(`create table "app_user" ("id" uuid not null, "organisation_id" uuid null, "email" text not null, "name" text not null default '', "role" text not null, "password_hash" text not null, "api_key_hash" text not null, "api_key_prefix" text not null, "api_key_last_used_at" timestamptz null, "created_at" timestamptz not null, constraint "app_user_pkey" primary key ("id"));`);
    this.addSql(`alter table "app_user" add constraint "app_user_email_unique" unique ("email");`);
    this.addSql(`alter table "app_user" add constraint "app_user_api_key_hash_unique" unique ("api_key_hash");`);

    this.addSql(`create table "version_file" ("id" uuid not null, "version_id" uuid not null, "name" text not null, "size" bigint not null, "sha256" text not null, "storage_key" text not null, "content_type" text not null default 'application/octet-stream', "created_at" timestamptz not null, constraint "version_file_pkey" primary key ("id"));`);
    this.addSql(`create index "version_file_version_id_index" on "version_file" ("version_id");`);

    this.addSql(`create table "activity_log_entry" ("id" uuid not null, "organisation_id" uuid not null, "kind" text not null, "purchase_id" uuid not null, "token_id" uuid null, "file_id" uuid null, "bytes" bigint null, "ip" text null, "user_agent" text null, "created_at" timestamptz not null, constraint "activity_log_entry_pkey" primary key ("id"));`);
    this.addSql(`create index "activity_log_entry_organisation_id_kind_created_at_index" on "activity_log_entry" ("organisation_id", "kind", "created_at");`);

    this.addSql(`create table "webhook_delivery" ("id" uuid not null, "organisation_id" uuid not null, "platform" text not null, "external_order_id" text not null, "status" text not null default 'Pending', "unmatched" boolean not null default false, "test" boolean not null default false, "workflow_ids" jsonb not null, "received_at" timestamptz not null, "completed_at" timestamptz null, constraint "webhook_delivery_pkey" primary key ("id"));`);
    this.addSql(`create index "webhook_delivery_organisation_id_platform_external_60fb2_index" on "webhook_delivery" ("organisation_id", "platform", "external_order_id");`);
    this.addSql(`create index "webhook_delivery_organisation_id_received_at_index" on "webhook_delivery" ("organisation_id", "received_at");`);

    this.addSql(`create table "webhook_delivery_item" ("id" uuid not null, "delivery_id" uuid not null, "line_index" int not null, "sku" text null, "product_id" uuid null, "outcome" text null, "reason" text null, "purchase_id" uuid null, "workflow_id" text null, constraint "webhook_delivery_item_pkey" primary key ("id"));`);
    this.addSql(`create index "webhook_delivery_item_delivery_id_index" on "webhook_delivery_item" ("delivery_id");`);

    this.addSql(`alter table "integration" add constraint "integration_organisation_id_foreign" foreign key ("organisation_id") references "organisation" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "customer" add constraint "customer_organisation_id_foreign" foreign key ("organisation_id") references "organisation" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "product" add constraint "product_organisation_id_foreign" foreign key ("organisation_id") references "organisation" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "product" add constraint "product_active_version_id_foreign" foreign key ("active_version_id") references "product_version" ("id") on update cascade on delete set null;`);

    this.addSql(`alter table "product_version" add constraint "product_version_product_id_foreign" foreign key ("product_id") references "product" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "product_sku" add constraint "product_sku_organisation_id_foreign" foreign key ("organisation_id") references "organisation" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "product_sku" add constraint "product_sku_product_id_foreign" foreign key ("product_id") references "product" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "purchase" add constraint "purchase_organisation_id_foreign" foreign key ("organisation_id") references "organisation" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "purchase" add constraint "purchase_product_id_foreign" foreign key ("product_id") references "product" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "purchase" add constraint "purchase_version_id_foreign" foreign key ("version_id") references "product_version" ("id") on update cascade on delete set null;`);
    this.addSql(`alter table "purchase" add constraint "purchase_customer_id_foreign" foreign key ("customer_id") references "customer" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "download_token" add constraint "download_token_purchase_id_foreign" foreign key ("purchase_id") references "purchase" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "sent_email" add constraint "sent_email_organisation_id_foreign" foreign key ("organisation_id") references "organisation" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "unmatched_sku" add constraint "unmatched_sku_organisation_id_foreign" foreign key ("organisation_id") references "organisation" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "app_user" add constraint "app_user_organisation_id_foreign" foreign key ("organisation_id") references "organisation" ("id") on update cascade on delete set null;`);

    this.addSql(`alter table "version_file" add constraint "version_file_version_id_foreign" foreign key ("version_id") references "product_version" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "activity_log_entry" add constraint "activity_log_entry_organisation_id_foreign" foreign key ("organisation_id") references "organisation" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "activity_log_entry" add constraint "activity_log_entry_purchase_id_foreign" foreign key ("purchase_id") references "purchase" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "activity_log_entry" add constraint "activity_log_entry_token_id_foreign" foreign key ("token_id") references "download_token" ("id") on update cascade on delete set null;`);
    this.addSql(`alter table "activity_log_entry" add constraint "activity_log_entry_file_id_foreign" foreign key ("file_id") references "version_file" ("id") on update cascade on delete set null;`);

    this.addSql(`alter table "webhook_delivery" add constraint "webhook_delivery_organisation_id_foreign" foreign key ("organisation_id") references "organisation" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "webhook_delivery_item" add constraint "webhook_delivery_item_delivery_id_foreign" foreign key ("delivery_id") references "webhook_delivery" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "webhook_delivery_item" add constraint "webhook_delivery_item_product_id_foreign" foreign key ("product_id") references "product" ("id") on update cascade on delete set null;`);
    this.addSql(`alter table "webhook_delivery_item" add constraint "webhook_delivery_item_purchase_id_foreign" foreign key ("purchase_id") references "purchase" ("id") on update cascade on delete set null;`);
  }

}
