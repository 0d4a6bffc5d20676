import type { EntityManager } from '@mikro-orm/postgresql';
import { isoUtc, sql, statement, type NoRows, type Sql, type SqlValue } from '../db/sql';
import type { ProductStatus } from '../domain/statuses';

/**
 * The catalogue's SQL: products, their versions, SKUs and files.
 * Owns the tables product, product_version, product_sku and version_file (version_notification is
 * in ./version-notification-store).
 */

// ---------------------------------------------------------------------------------------------
// Listings: one query for any number of products (active version joined, extra SKUs aggregated).

/**
 * A listing (ProductListingSchema) as PostgreSQL builds it, keys in the schema's order. The JSON
 * leaves the database as one text value that the API sends as it is: decoding a row per product
 * and serialising the objects again was most of a listing's cost in Node (GET /api/products is
 * what integrations poll). The SKUs are aggregated once for the whole set (a per-row subquery was
 * twice as slow for 100 products).
 */
const listingJsonSql = (skuFilter: Sql, productFilter: Sql, aggregate: (listing: Sql) => Sql): Sql => sql`
  select ${aggregate(sql`json_build_object(
    'product', json_build_object(
      'id', p.id, 'orgId', p.organisation_id, 'name', p.name, 'slug', p.slug, 'description', p.description,
      'status', p.status, 'activeVersionId', p.active_version_id, 'skus', coalesce(s.skus, '[]'),
      'downloadLimit', p.download_limit,
      'licenseKeys', case when p.license_source is null then null
        else json_build_object('source', p.license_source, 'activationLimit', p.license_activation_limit) end,
      'stampPdfs', p.stamp_pdfs,
      'createdAt', ${isoUtc('p.created_at')}, 'updatedAt', ${isoUtc('p.updated_at')}),
    'activeVersion', case when v.id is null then null
      else json_build_object('id', v.id, 'productId', p.id, 'version', v.version, 'status', v.status) end)`)}::text as listing
  from product p
  left join product_version v on v.id = p.active_version_id and v.product_id = p.id
  left join (
    select product_id, json_agg(sku order by sku) as skus from product_sku
    where not is_slug and ${skuFilter} group by product_id
  ) s on s.product_id = p.id
  where ${productFilter}`;

const listAll = (skuFilter: Sql, productFilter: Sql): Sql =>
  listingJsonSql(skuFilter, productFilter, (listing) => sql`coalesce(json_agg(${listing} order by p.created_at, p.id), '[]')`);

/** The JSON text of one listing, or of an array of them. */
export interface ListingRow {
  listing: string;
}

const productListingsRead = statement<ListingRow, { orgId: string }>(
  { listing: true },
  (p) => listAll(sql`organisation_id = ${p.orgId}`, sql`p.organisation_id = ${p.orgId}`),
);

const productListingRead = statement<ListingRow, { orgId: string; productId: string }>(
  { listing: true },
  (p) => listingJsonSql(sql`product_id = ${p.productId}`, sql`p.organisation_id = ${p.orgId} and p.id = ${p.productId}`, (listing) => listing),
);

/** The organisation's catalogue version, with its listings unless the caller holds that version. */
export interface VersionedListings {
  version: string;
  /** The JSON text of ProductListing[]; null when the version is the one the caller holds. */
  listing: string | null;
}

const versionedListingsRead = statement<VersionedListings, { heldVersion: string | null; orgId: string }>(
  { version: true, listing: true },
  (p) => sql`
  select o.catalogue_version::text as version,
    case when o.catalogue_version = ${p.heldVersion}::bigint then null
      else (${listAll(sql`organisation_id = o.id`, sql`p.organisation_id = o.id`)}) end as listing
  from organisation o where o.id = ${p.orgId}`,
);

/** The JSON text of the organisation's ProductListing[], oldest first (creation order, then id). */
export async function productListingsJson(em: EntityManager, orgId: string): Promise<string> {
  return (await productListingsRead.first(em, { orgId }))!.listing;
}

/** The JSON text of one product's ProductListing; undefined when the organisation has no such product. */
export async function productListingJson(em: EntityManager, orgId: string, productId: string): Promise<string | undefined> {
  return (await productListingRead.first(em, { orgId, productId }))?.listing;
}

/**
 * The organisation's catalogue version (organisation.catalogue_version) and, read in the same
 * snapshot, the JSON of its listings unless `heldVersion` is still current; undefined for an
 * unknown organisation.
 */
export function versionedListingsJson(em: EntityManager, orgId: string, heldVersion: string | null): Promise<VersionedListings | undefined> {
  return versionedListingsRead.first(em, { heldVersion, orgId });
}

// ---------------------------------------------------------------------------------------------
// Files of a version, as the download page serves them and the storage migration copies them.

/** One file of a version as the download page reads it (`created_at` as the connection hands it over). */
export interface VersionFileRow {
  id: string;
  name: string;
  size: string | number;
  sha256: string;
  storage_key: string;
  content_type: string;
  created_at: Date | string;
}

const versionFileColumns = sql`f.id, f.name, f.size, f.sha256, f.storage_key, f.content_type, f.created_at`;

const versionFilesRead = statement<VersionFileRow, { versionId: string }>(
  { id: true, name: true, size: true, sha256: true, storage_key: true, content_type: true, created_at: true },
  (p) => sql`select ${versionFileColumns} from version_file f where f.version_id = ${p.versionId} order by f.name, f.created_at`,
);

const organisationVersionFileRead = statement<VersionFileRow, { fileId: string; versionId: string; orgId: string }>(
  { id: true, name: true, size: true, sha256: true, storage_key: true, content_type: true, created_at: true },
  (p) => sql`select ${versionFileColumns} from version_file f
     join product_version v on v.id = f.version_id
     join product pr on pr.id = v.product_id
     where f.id = ${p.fileId} and f.version_id = ${p.versionId} and pr.organisation_id = ${p.orgId}`,
);

/** The files of a version, in a stable order (name, then upload time). */
export function versionFiles(em: EntityManager, versionId: string): Promise<VersionFileRow[]> {
  return versionFilesRead.rows(em, { versionId });
}

/** One file of the version, only if that version is of the organisation's product. */
export function organisationVersionFile(em: EntityManager, orgId: string, versionId: string, fileId: string): Promise<VersionFileRow | undefined> {
  return organisationVersionFileRead.first(em, { fileId, versionId, orgId });
}

const productFilesRead = statement<VersionFileRow, { productId: string }>(
  { id: true, name: true, size: true, sha256: true, storage_key: true, content_type: true, created_at: true },
  (p) => sql`select ${versionFileColumns} from version_file f join product_version v on v.id = f.version_id
     where v.product_id = ${p.productId} order by v.created_at, f.name, f.created_at`,
);

/** Every file of every version of the product, oldest version first. */
export function productFiles(em: EntityManager, productId: string): Promise<VersionFileRow[]> {
  return productFilesRead.rows(em, { productId });
}

/** A file as the storage migration copies and checks it. */
export interface StoredFileRow {
  id: string;
  storage_key: string;
  size: string;
  sha256: string;
}

const storedFilesBatchRead = statement<StoredFileRow, { after: string | null; size: number }>(
  { id: true, storage_key: true, size: true, sha256: true },
  (p) => sql`select id, storage_key, size::text as size, sha256 from version_file
    where (${p.after}::uuid is null or id > ${p.after}::uuid) order by id limit ${p.size}`,
);

/** Every version file, by id after `after`, `size` at most. */
export function storedFilesAfter(em: EntityManager, after: string | null, size: number): Promise<StoredFileRow[]> {
  return storedFilesBatchRead.rows(em, { after, size });
}

// ---------------------------------------------------------------------------------------------
// SKUs: which product a SKU of a sale maps to.

/** A product of a SKU as the intake reads it. */
export interface SkuMatchRow {
  sku: string;
  product_id: string;
  status: ProductStatus;
  live_version: boolean;
}

/**
 * SKU, product and its active version (a JSON array of SkuMatchRow) for the normalised SKUs
 * `skus` (a text[] parameter, or a column of one) in the organisation whose id is the SQL
 * `organisationId`. The intake's read of the organisations that may verify a delivery selects it too.
 */
export const skuMatchesSql = (skus: SqlValue, organisationId: Sql): Sql =>
  sql`coalesce((select jsonb_agg(jsonb_build_object('sku', ps.sku, 'product_id', p.id, 'status', p.status,
      'live_version', coalesce(v.status = 'ready', false)))
    from product_sku ps
    join product p on p.id = ps.product_id
    left join product_version v on v.id = p.active_version_id
    where ps.organisation_id = ${organisationId} and ps.sku = any(${skus}::text[])), '[]'::jsonb)`;

const skuMatchesRead = statement<{ matches: SkuMatchRow[] }, { skus: string[]; orgId: string }>(
  { matches: true },
  (p) => sql`select ${skuMatchesSql(p.skus, sql`o.id`)} as matches from organisation o where o.id = ${p.orgId}`,
);

/** The products of the organisation's normalised `skus` (none for an unknown organisation). */
export async function skuMatches(em: EntityManager, orgId: string, skus: string[]): Promise<SkuMatchRow[]> {
  return (await skuMatchesRead.first(em, { skus, orgId }))?.matches ?? [];
}

const skuProductRead = statement<{ product_id: string }, { orgId: string; sku: string }>(
  { product_id: true },
  (p) => sql`select product_id from product_sku where organisation_id = ${p.orgId} and sku = ${p.sku}`,
);

/** The product a normalised SKU maps to in the organisation, or null. */
export async function productOfSku(em: EntityManager, orgId: string, sku: string): Promise<string | null> {
  return (await skuProductRead.first(em, { orgId, sku }))?.product_id ?? null;
}

/** A SKU's product and whether it has a ready active version. */
export interface SkuProductRow {
  id: string;
  status: string;
  live: boolean;
}

const skuProductLiveRead = statement<SkuProductRow, { orgId: string; sku: string }>(
  { id: true, status: true, live: true },
  (p) => sql`select p.id, p.status, coalesce(v.status = 'ready', false) as live
       from product_sku s join product p on p.id = s.product_id left join product_version v on v.id = p.active_version_id
       where s.organisation_id = ${p.orgId} and s.sku = ${p.sku}`,
);

/** The product a normalised SKU maps to in the organisation, with its status and whether its active version is ready. */
export function skuProduct(em: EntityManager, orgId: string, sku: string): Promise<SkuProductRow | undefined> {
  return skuProductLiveRead.first(em, { orgId, sku });
}

// ---------------------------------------------------------------------------------------------
// A license-key pool's warning marks (decisions §14): each alert goes once per time the pool runs
// dry or low (the keys themselves are src/licenses').

/**
 * After an upload: a pool back at the threshold may warn again when it falls below it; one that got
 * keys may alert again the next time a sale finds it empty.
 */
const rearmPoolMarks = statement<NoRows, { productId: string; threshold: number; added: number }>(
  {},
  (p) => sql`update product pr set
       license_low_warned = pr.license_low_warned and c.available < ${p.threshold},
       license_dry_alerted = pr.license_dry_alerted and ${p.added}::int = 0
     from (select count(*) as available from license_key where product_id = ${p.productId} and purchase_id is null) c
     where pr.id = ${p.productId}`,
);

export async function rearmPoolAlerts(tx: EntityManager, productId: string, threshold: number, added: number): Promise<void> {
  await rearmPoolMarks.run(tx, { productId, threshold, added });
}

export interface DuePoolAlerts {
  dry: boolean;
  low: boolean;
  available: number;
  organisation_id: string;
  product_name: string;
}

const flipPoolMarks = statement<DuePoolAlerts, { productId: string; waiting: boolean; threshold: number }>(
  { dry: true, low: true, available: true, organisation_id: true, product_name: true },
  (p) => sql`update product pr set
       license_dry_alerted = pr.license_dry_alerted or ${p.waiting}::boolean,
       license_low_warned = pr.license_low_warned or c.available < ${p.threshold}
     from (select count(*)::int as available from license_key where product_id = ${p.productId} and purchase_id is null) c,
       (select license_dry_alerted as was_dry, license_low_warned as was_low from product where id = ${p.productId}) o
     where pr.id = ${p.productId} and pr.license_source = 'pool'
       and ((${p.waiting}::boolean and not pr.license_dry_alerted) or (c.available < ${p.threshold} and not pr.license_low_warned))
     returning ${p.waiting}::boolean and not o.was_dry as dry, c.available < ${p.threshold} and not o.was_low as low, c.available,
       pr.organisation_id, pr.name as product_name`,
);

/**
 * Marks the pool's alerts after a key was issued from it (`waiting`: a purchase found it empty):
 * answers which were newly due, so that each goes once per time the pool runs dry or low.
 */
export function duePoolAlerts(em: EntityManager, productId: string, waiting: boolean, threshold: number): Promise<DuePoolAlerts | undefined> {
  return flipPoolMarks.first(em, { productId, waiting, threshold });
}
