import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { Product, ProductSku, ProductVersion } from '../db/entities';
import { productFiles, productListingJson, productListingsJson } from '../catalogue/catalogue-store';
import type { FileStorage } from '../storage/file-storage';
import { assertStampableFile } from './stamped-copies';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../domain/errors';
import { normaliseSku } from '../domain/ids';
import { normaliseSlug } from '../domain/slug';
import { isAdminRole, PRODUCT_STATUSES, VERSION_STATUSES } from '../domain/statuses';
import type { Principal } from '../domain/access';
import { isUuid } from '../domain/uuid';
import { boundedText, FIELD_LIMITS } from '../domain/field-limits';
import { LICENSE_SOURCES } from '../domain/license-keys';
import { purchasesWaitingForKey } from '../licenses/license-store';

// ---------------------------------------------------------------------------------------------
// Wire shapes (spec "Resources" + decisions §3). Timestamps are ISO 8601 strings.

/** A product's key policy (decisions §14), as shown and as entered. */
const LicenseKeysSchema = z.object({
  source: z.enum(LICENSE_SOURCES).describe('`generated`: a new key with each purchase; `pool`: the oldest uploaded key'),
  activationLimit: z.number().int().nullable().describe('activations allowed per key; null = unlimited'),
}).nullable().describe('license keys issued with each purchase (decisions §14); null = none');

export const LicenseKeysInput = z.object({
  source: z.enum(LICENSE_SOURCES, { error: 'licenseKeys.source must be "generated" or "pool"' }),
  activationLimit: z.number({ error: 'licenseKeys.activationLimit must be a whole number or null' })
    .int('licenseKeys.activationLimit must be a whole number').min(1, 'licenseKeys.activationLimit must be at least 1')
    .max(1_000_000, 'licenseKeys.activationLimit must be at most 1000000').nullable().optional()
    .describe('activations allowed per key; null or absent = unlimited'),
}, { error: 'licenseKeys must be null or {"source": "generated" | "pool", "activationLimit": n | null}' }).strict().nullable();

export const ProductSchema = z.object({
  id: z.uuid(),
  orgId: z.uuid(),
  name: z.string(),
  slug: z.string().describe('lowercase letters, digits and hyphens; unique in the organisation; always maps as a SKU'),
  description: z.string(),
  status: z.enum(PRODUCT_STATUSES),
  activeVersionId: z.uuid().nullable(),
  skus: z.array(z.string()).describe('extra SKUs (normalised: trimmed, lower-case) that map to this product'),
  downloadLimit: z.number().int().nullable().describe('completed file transfers allowed per purchase (decisions §10); null = unlimited'),
  licenseKeys: LicenseKeysSchema,
  stampPdfs: z.boolean().describe('its PDFs are served to each buyer stamped with their email and order (decisions §16)'),
  createdAt: z.string().describe('ISO 8601'),
  updatedAt: z.string().describe('ISO 8601'),
});
export type ProductJson = z.infer<typeof ProductSchema>;

/** The create response: the spec's row without activeVersionId and updatedAt. */
export const CreatedProductSchema = ProductSchema.omit({ activeVersionId: true, updatedAt: true });
export type CreatedProductJson = z.infer<typeof CreatedProductSchema>;

export const ActiveVersionSchema = z.object({
  id: z.uuid(),
  productId: z.uuid(),
  version: z.string(),
  status: z.enum(VERSION_STATUSES),
});

export const ProductListingSchema = z.object({
  product: ProductSchema,
  activeVersion: ActiveVersionSchema.nullable(),
});
export type ProductListing = z.infer<typeof ProductListingSchema>;

/** Dashboard forms send what was typed: digits become the number, an empty field null ("no limit"). */
export const typedWholeNumber = (value: unknown): unknown =>
  (typeof value === 'string' ? (value.trim() === '' ? null : /^\d+$/.test(value.trim()) ? Number(value.trim()) : value) : value);

/** A download limit as entered: a positive whole number of completed transfers, or null for unlimited. */
export const DownloadLimitInput = z.preprocess(
  typedWholeNumber,
  z.number({ error: 'downloadLimit must be a whole number or null' }).int('downloadLimit must be a whole number')
    .min(1, 'downloadLimit must be at least 1').max(1_000_000, 'downloadLimit must be at most 1000000').nullable(),
);

const StampPdfsInput = z.boolean({ error: 'stampPdfs must be true or false' });

const SkusInput = z
  .array(boundedText(FIELD_LIMITS.productSku))
  .max(200, 'at most 200 SKUs')
  .describe('extra SKUs; matched case-insensitively after trimming; each maps to at most one product of the organisation');

/**
 * POST body. name and slug are typed optional so that a missing one is answered by the service
 * with the plain message "name is required" / "slug is required".
 */
export const CreateProductSchema = z.object({
  name: boundedText(500).optional().describe('required'),
  slug: boundedText(200).optional().describe('required; normalised to lowercase letters, digits and hyphens'),
  description: boundedText(20_000).optional(),
  skus: SkusInput.optional(),
  downloadLimit: DownloadLimitInput.optional().describe('completed file transfers allowed per purchase; null or absent = unlimited'),
  licenseKeys: LicenseKeysInput.optional().describe('license keys issued with each purchase (decisions §14); null or absent = none'),
  stampPdfs: StampPdfsInput.optional().describe('stamp its PDFs for each buyer (decisions §16); absent = false'),
});
export type CreateProductInput = z.infer<typeof CreateProductSchema>;

/** PUT body: merged into the product. Keys not listed here (id, orgId, createdAt, ...) are ignored. */
export const UpdateProductSchema = z.object({
  name: boundedText(500).optional(),
  description: boundedText(20_000).optional(),
  status: z.enum(PRODUCT_STATUSES).optional(),
  slug: boundedText(200).optional().describe('normalised like on create'),
  skus: SkusInput.optional().describe('replaces the extra SKUs'),
  activeVersionId: boundedText(FIELD_LIMITS.id).nullable().optional().describe('a ready version of this product; null clears it'),
  downloadLimit: DownloadLimitInput.optional().describe('completed file transfers allowed per purchase; null = unlimited'),
  licenseKeys: LicenseKeysInput.optional().describe('license keys issued with each purchase (decisions §14); null = none'),
  stampPdfs: StampPdfsInput.optional().describe('stamp its PDFs for each buyer (decisions §16); turning it on checks the PDFs already '
    + 'uploaded: one that cannot be stamped (encrypted, unreadable) is 422 naming it'),
});
export type UpdateProductInput = z.infer<typeof UpdateProductSchema>;

// ---------------------------------------------------------------------------------------------
// Reads: one query for any number of products (active version joined, extra SKUs aggregated).

/** Every product of the organisation, oldest first (creation order, then id). */
export async function listProducts(em: EntityManager, orgId: string): Promise<ProductListing[]> {
  return JSON.parse(await productListingsJson(em, orgId)) as ProductListing[];
}

/** One product of the organisation; unknown, malformed or another organisation's id → 404. */
export async function getProduct(em: EntityManager, orgId: string, productId: string): Promise<ProductListing> {
  const listing = isUuid(productId) ? await productListingJson(em, orgId, productId) : undefined;
  if (listing === undefined) throw new NotFoundError('product not found');
  return JSON.parse(listing) as ProductListing;
}

/** The product entity, scoped to the organisation (404 otherwise). */
export async function findProduct(em: EntityManager, orgId: string, productId: string, options: { lock?: boolean } = {}): Promise<Product> {
  const lock = options.lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {};
  const product = isUuid(productId) ? await em.findOne(Product, { id: productId, organisation: orgId }, lock) : null;
  if (!product) throw new NotFoundError('product not found');
  return product;
}

// ---------------------------------------------------------------------------------------------
// Writes

function requiredName(value: string | undefined): string {
  const name = value?.trim();
  if (!name) throw new ValidationError('name is required');
  return name;
}

function slugOf(value: string): string {
  const slug = normaliseSlug(value);
  if (!slug) throw new ValidationError('slug must contain at least one letter or digit');
  return slug;
}

/** Normalised, de-duplicated extra SKUs; the slug always maps, so it is not repeated here. */
function extraSkusOf(skus: readonly string[], slug: string): string[] {
  // The dashboard's SKU box and map-and-replay arrive here without the API's schema: the same check.
  const checked = SkusInput.safeParse(skus);
  if (!checked.success) {
    const [issue] = checked.error.issues;
    throw new ValidationError(`skus${issue.path.map((part) => `.${String(part)}`).join('')}: ${issue.message}`);
  }
  const normalised = skus.map(normaliseSku);
  if (normalised.some((sku) => sku === '')) throw new ValidationError('skus must not contain empty strings');
  return [...new Set(normalised)].filter((sku) => sku !== slug).sort();
}

/**
 * Refuses SKUs (the slug included) that already map to another product of the organisation, naming
 * the first clash. The unique key (organisation, sku) still decides races: see `asConflict`.
 */
async function assertSkusFree(em: EntityManager, orgId: string, productId: string | null, slug: string, extras: string[]): Promise<void> {
  const taken = await em.find(
    ProductSku,
    { organisation: orgId, sku: { $in: [slug, ...extras] }, ...(productId ? { product: { $ne: productId } } : {}) },
    { orderBy: { sku: 'asc' }, limit: 1 },
  );
  if (!taken[0]) return;
  throw new ConflictError(
    taken[0].sku === slug
      ? `slug "${slug}" is already used by another product of this organisation`
      : `SKU "${taken[0].sku}" already maps to another product of this organisation`,
  );
}

/**
 * Makes the product's SKU rows exactly {slug (isSlug), extras}, given its `existing` rows: stale rows
 * are deleted first (a statement of its own, so that a SKU can move between slug and extra in one
 * call), the missing ones are created for the transaction's flush.
 */
async function syncSkus(tx: EntityManager, product: Product, extras: string[], existing: ProductSku[]): Promise<void> {
  const wanted = new Map<string, boolean>([[product.slug, true], ...extras.map((sku) => [sku, false] as const)]);
  const stale = existing.filter((row) => wanted.get(row.sku) !== row.isSlug);
  if (stale.length > 0) await tx.nativeDelete(ProductSku, { id: { $in: stale.map((row) => row.id) } });
  const kept = new Set(existing.filter((row) => !stale.includes(row)).map((row) => row.sku));
  for (const [sku, isSlug] of wanted) {
    if (!kept.has(sku)) tx.create(ProductSku, { organisation: product.organisation, product, sku, isSlug });
  }
}

/** POST /api/products: a draft product with its slug and extra SKUs. */
export async function createProduct(em: EntityManager, orgId: string, input: CreateProductInput): Promise<CreatedProductJson> {
  const name = requiredName(input.name);
  if (input.slug === undefined || input.slug.trim() === '') throw new ValidationError('slug is required');
  const slug = slugOf(input.slug);
  const extras = extraSkusOf(input.skus ?? [], slug);
  await assertSkusFree(em, orgId, null, slug, extras);

  const productId = await em.transactional(async (tx) => {
    const product = tx.create(Product, {
      organisation: orgId, name, slug, description: input.description ?? '', downloadLimit: input.downloadLimit ?? null,
      licenseSource: input.licenseKeys?.source ?? null, licenseActivationLimit: input.licenseKeys?.activationLimit ?? null,
      stampPdfs: input.stampPdfs ?? false,
    });
    await syncSkus(tx, product, extras, []);
    return product.id;
  });
  const { activeVersionId: _activeVersionId, updatedAt: _updatedAt, ...created } = (await getProduct(em, orgId, productId)).product;
  return created;
}

/**
 * PUT /api/products/{productId}: merges the given fields; answers the full row. A download limit
 * bounds what every buyer of the product may take: only owners and admins change it (a member's
 * form may send it back unchanged). `addSkus` (not a field of the API: mapping an unmatched SKU)
 * adds to the SKUs as they are when the product is locked, so maps at the same moment all stay.
 */
export async function updateProduct(
  em: EntityManager,
  storage: FileStorage,
  editor: Pick<Principal, 'orgId' | 'role'>,
  productId: string,
  patch: UpdateProductInput & { addSkus?: string[] },
): Promise<ProductJson> {
  const { orgId } = editor;
  const name = patch.name === undefined ? undefined : requiredName(patch.name);
  const slug = patch.slug === undefined ? undefined : slugOf(patch.slug);

  if (patch.stampPdfs === true) await assertProductStampable(em, storage, orgId, productId);

  await em.transactional(async (tx) => {
    // Locked: two edits at once are made one after the other, each on what the other saved.
    const product = await findProduct(tx, orgId, productId, { lock: true });
    if (name !== undefined) product.name = name;
    if (patch.stampPdfs !== undefined) product.stampPdfs = patch.stampPdfs;
    if (patch.description !== undefined) product.description = patch.description;
    if (patch.status !== undefined) product.status = patch.status;
    if (patch.downloadLimit !== undefined && patch.downloadLimit !== product.downloadLimit) {
      if (!isAdminRole(editor.role)) throw new ForbiddenError('admin role required: only owners and admins may change a download limit');
      product.downloadLimit = patch.downloadLimit;
    }
    if (patch.licenseKeys !== undefined) {
      const source = patch.licenseKeys?.source ?? null;
      const activationLimit = patch.licenseKeys?.activationLimit ?? null;
      if (source !== product.licenseSource || activationLimit !== product.licenseActivationLimit) {
        if (!isAdminRole(editor.role)) throw new ForbiddenError('admin role required: only owners and admins may change a product\'s license keys');
        // Only an upload releases a purchase waiting for a pool key: leaving the pool would strand it.
        const waiting = product.licenseSource === 'pool' && source !== 'pool' ? await purchasesWaitingForKey(tx, product.id) : 0;
        if (waiting > 0) {
          throw new ConflictError(`${waiting} purchase(s) wait for a license key from this product's pool: upload keys (or revoke those purchases) before it stops using the pool`);
        }
        product.licenseSource = source;
        product.licenseActivationLimit = activationLimit;
      }
    }
    if (patch.activeVersionId !== undefined) product.activeVersion = await readyVersionOf(tx, product, patch.activeVersionId);
    if (slug !== undefined || patch.skus !== undefined || patch.addSkus !== undefined) {
      if (slug !== undefined) product.slug = slug;
      const existing = await tx.find(ProductSku, { product });
      const listed = patch.skus ?? existing.filter((row) => !row.isSlug).map((row) => row.sku);
      const extras = extraSkusOf([...listed, ...(patch.addSkus ?? [])], product.slug);
      await assertSkusFree(tx, orgId, product.id, product.slug, extras);
      await syncSkus(tx, product, extras, existing);
    }
    // SKU changes live in their own table: the product row is touched explicitly.
    product.updatedAt = new Date();
  });
  return (await getProduct(em, orgId, productId)).product;
}

/**
 * Turning stamping on: every PDF the product already has must be one that can be stamped (a
 * product that already stamps was checked as each was uploaded).
 */
async function assertProductStampable(em: EntityManager, storage: FileStorage, orgId: string, productId: string): Promise<void> {
  const product = await findProduct(em, orgId, productId);
  if (product.stampPdfs) return;
  for (const file of await productFiles(em, product.id)) {
    await assertStampableFile(storage, { name: file.name, contentType: file.content_type, storageKey: file.storage_key, size: Number(file.size) });
  }
}

/** activeVersionId must name a ready version of this very product (else 400); null clears it. */
async function readyVersionOf(tx: EntityManager, product: Product, versionId: string | null): Promise<ProductVersion | null> {
  if (versionId === null) return null;
  const version = isUuid(versionId) ? await tx.findOne(ProductVersion, { id: versionId, product }) : null;
  if (!version || version.status !== 'ready') {
    throw new ValidationError('activeVersionId must be the id of a ready version of this product');
  }
  return version;
}
