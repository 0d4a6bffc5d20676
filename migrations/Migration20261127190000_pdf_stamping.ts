import { Migration } from '@mikro-orm/migrations';

/**
 * PDF stamping (decisions §16): whether a product's PDFs are stamped for each buyer (off by
 * default), and the stamped copies made, one per (purchase, file), each gone with its purchase or
 * its file.
 */
export class Migration20261127190000_pdf_stamping extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "product" add column "stamp_pdfs" boolean not null default false;`);
    this.addSql(`create table "stamped_copy" ("purchase_id" uuid not null, "file_id" uuid not null, "storage_key" text not null,
      "size" bigint not null, "sha256" text not null, "created_at" timestamptz not null,
      constraint "stamped_copy_pkey" primary key ("purchase_id", "file_id"));`);
    this.addSql(`create index "stamped_copy_file_id_index" on "stamped_copy" ("file_id");`);
    this.addSql(`alter table "stamped_copy" add constraint "stamped_copy_purchase_id_foreign" foreign key ("purchase_id")
      references "purchase" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "stamped_copy" add constraint "stamped_copy_file_id_foreign" foreign key ("file_id")
      references "version_file" ("id") on update cascade on delete cascade;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "stamped_copy" cascade;`);
    this.addSql(`alter table "product" drop column "stamp_pdfs";`);
  }
}
