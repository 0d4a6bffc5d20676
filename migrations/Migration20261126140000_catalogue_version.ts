import { Migration } from '@mikro-orm/migrations';

/**
 * organisation.catalogue_version: bumped by triggers in the transaction of every change to what
 * GET /api/products lists (products, their SKUs, their versions), whatever code or process makes
 * it. An API process keeps the listing's JSON with the version it was read at and serves it again
 * while the version stands (src/services/catalogue-listings.ts).
 */
export class Migration20261126140000_catalogue_version extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "organisation" add column "catalogue_version" bigint not null default 0;`);
    // A version row names only its product; the others name their organisation.
    this.addSql(`create function "bump_catalogue_version"() returns trigger language plpgsql as $$
      declare
        changed jsonb := to_jsonb(case when tg_op = 'DELETE' then old else new end);
      begin
        update "organisation" set "catalogue_version" = "catalogue_version" + 1
        where "id" = coalesce((changed->>'organisation_id')::uuid,
          (select "organisation_id" from "product" where "id" = (changed->>'product_id')::uuid));
        return null;
      end $$;`);
    for (const table of ['product', 'product_sku', 'product_version']) {
      this.addSql(`create trigger "${table}_bumps_catalogue_version" after insert or update or delete on "${table}"
        for each row execute function "bump_catalogue_version"();`);
    }
  }

  override async down(): Promise<void> {
    for (const table of ['product', 'product_sku', 'product_version']) {
      this.addSql(`drop trigger if exists "${table}_bumps_catalogue_version" on "${table}";`);
    }
    this.addSql(`drop function if exists "bump_catalogue_version"();`);
    this.addSql(`alter table "organisation" drop column "catalogue_version";`);
  }
}
