import { Readable } from 'node:stream';
import { Product, ProductSku, ProductVersion, VersionFile } from '../../src/db/entities';
import { normaliseSku } from '../../src/domain/ids';
import type { ProductStatus } from '../../src/domain/statuses';
import { OWASP_SCRYPT_COST, PasswordHasher } from '../../src/security/password-hashing';
import { addUser, createOrganisation } from '../../src/services/organisations';
import type { Role } from '../../src/domain/statuses';
import type { Harness } from './harness';

/** What seeding writes to: a harness, or a benchmark's view of a running service. */
export type SeedTarget = Pick<Harness, 'orm' | 'storage' | 'passwords'>;

/**
 * scrypt's N for the tests' staff passwords: 2^10 (1 MiB, about 2 ms) instead of the service's
 * 2^17 (128 MiB, a third of a second or more), which made hashing the suite's several hundred
 * seeded accounts minutes of its two cores. The files that test what hashing costs (the thread
 * pool's limits, the upgrade to today's cost) set PASSWORD_SCRYPT_N themselves.
 */
export const TEST_PASSWORD_SCRYPT_N = String(2 ** 10);

/** Hashes at the tests' cost, for seeding a service the test did not start with a harness. */
export const testPasswords = new PasswordHasher({ ...OWASP_SCRYPT_COST, N: Number(TEST_PASSWORD_SCRYPT_N) });

let counter = 0;
const unique = () => `${Date.now().toString(36)}${(counter++).toString(36)}`;

export async function seedOrganisation(h: SeedTarget, options: { subscriptionExpires?: string; name?: string } = {}) {
  const id = unique();
  return createOrganisation(h.orm.em.fork(), h.passwords, {
    name: options.name ?? `Org ${id}`,
    ownerEmail: `owner-${id}@example.com`,
    ownerPassword: 'correct horse battery',
    ownerName: 'Olive Owner',
    subscriptionExpires: options.subscriptionExpires,
  });
}

export async function seedUser(h: SeedTarget, orgId: string, role: Role) {
  const email = `${role}-${unique()}@example.com`;
  return { email, ...(await addUser(h.orm.em.fork(), h.passwords, orgId, { email, password: 'correct horse battery', role })) };
}

export interface SeededProduct {
  productId: string;
  versionId: string;
  fileId: string;
  fileBytes: Buffer;
}

/** A product with one ready version holding one small file; `live` publishes it too. */
export async function seedProduct(
  h: SeedTarget,
  orgId: string,
  options: { slug?: string; name?: string; status?: ProductStatus; skus?: string[]; withVersion?: boolean } = {},
): Promise<SeededProduct> {
  const em = h.orm.em.fork();
  const slug = options.slug ?? `product-${unique()}`;
  const product = em.create(Product, {
    organisation: orgId, name: options.name ?? `Product ${slug}`, slug, status: options.status ?? 'published',
  });
  em.create(ProductSku, { organisation: orgId, product, sku: normaliseSku(slug), isSlug: true });
  for (const sku of options.skus ?? []) em.create(ProductSku, { organisation: orgId, product, sku: normaliseSku(sku), isSlug: false });
  await em.flush();
  if (options.withVersion === false) return { productId: product.id, versionId: '', fileId: '', fileBytes: Buffer.alloc(0) };

  const version = em.create(ProductVersion, { product, version: '1.0.0' });
  const fileBytes = Buffer.from(`contents of ${slug} ${'x'.repeat(1000)}\n`);
  const file = em.create(VersionFile, { version, name: `${slug}.txt`, size: 0, sha256: '', storageKey: '' });
  file.storageKey = `files/${file.id}`;
  const stored = await h.storage.put(file.storageKey, Readable.from([fileBytes]), 1e9);
  file.size = stored.size;
  file.sha256 = stored.sha256;
  product.activeVersion = version;
  await em.flush();
  return { productId: product.id, versionId: version.id, fileId: file.id, fileBytes };
}
