import { Migration } from '@mikro-orm/migrations';

/** Signed values of body-less signatures (reseller-d-classic), to refuse replays with another body. */
export class Migration20261126090000_signature_nonce extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "signature_nonce" ("organisation_id" uuid not null, "platform" text not null, "nonce" text not null, "body_sha256" text not null, "created_at" timestamptz not null, constraint "signature_nonce_pkey" primary key ("organisation_id", "platform", "nonce"));`);
    this.addSql(`create index "signature_nonce_created_at_index" on "signature_nonce" ("created_at");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "signature_nonce" cascade;`);
  }
}
