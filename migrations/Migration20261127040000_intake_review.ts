import { Migration } from '@mikro-orm/migrations';

/**
 * Security review, issue 23. Signed nonces are kept for good, so each is stored as two SHA-256
 * digests (the nonce's, the body's) rather than the nonce's text, and is no longer pruned by age.
 * A refund or dispute entry keeps the platform's event id, and a purchase the time staff last
 * restored it, so an event from before that restore (or its redelivery) no longer revokes it.
 */
export class Migration20261127040000_intake_review extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "signature_nonce" add column "nonce_sha256" bytea null;`);
    this.addSql(`update "signature_nonce" set "nonce_sha256" = sha256(convert_to("nonce", 'UTF8'));`);
    this.addSql(`alter table "signature_nonce" drop constraint "signature_nonce_pkey";`);
    this.addSql(`alter table "signature_nonce" drop column "nonce";`);
    this.addSql(`alter table "signature_nonce" alter column "nonce_sha256" set not null;`);
    this.addSql(`alter table "signature_nonce" alter column "body_sha256" type bytea using decode("body_sha256", 'hex');`);
    this.addSql(`alter table "signature_nonce" add constraint "signature_nonce_pkey" primary key ("organisation_id", "platform", "nonce_sha256");`);
    this.addSql(`drop index "signature_nonce_created_at_index";`);
    this.addSql(`alter table "webhook_delivery" add column "event_id" text null;`);
    this.addSql(`create index "webhook_delivery_organisation_id_platform_event_id_index" on "webhook_delivery" ("organisation_id", "platform", "event_id");`);
    this.addSql(`alter table "purchase" add column "restored_at" timestamptz null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "purchase" drop column "restored_at";`);
    this.addSql(`drop index "webhook_delivery_organisation_id_platform_event_id_index";`);
    this.addSql(`alter table "webhook_delivery" drop column "event_id";`);
    // The nonces' text is gone: only the table's shape comes back, empty.
    this.addSql(`truncate "signature_nonce";`);
    this.addSql(`create index "signature_nonce_created_at_index" on "signature_nonce" ("created_at");`);
    this.addSql(`alter table "signature_nonce" drop constraint "signature_nonce_pkey";`);
    this.addSql(`alter table "signature_nonce" drop column "nonce_sha256";`);
    this.addSql(`alter table "signature_nonce" add column "nonce" text not null;`);
    this.addSql(`alter table "signature_nonce" alter column "body_sha256" type text using encode("body_sha256", 'hex');`);
    this.addSql(`alter table "signature_nonce" add constraint "signature_nonce_pkey" primary key ("organisation_id", "platform", "nonce");`);
  }
}
