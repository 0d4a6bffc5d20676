import type { FastifyInstance } from 'fastify';
import { Organisation, Product, ProductSku, ProductVersion } from '../../src/db/entities';
import { buildApiApp } from '../../src/roles';
import { AUTH_FAILURES, seedCallers, type ApiCallers } from '../helpers/api-callers';
import { startHarness, type Harness } from '../helpers/harness';
import { seedOrganisation, seedProduct } from '../helpers/seed';

let h: Harness;
let c: ApiCallers;

beforeAll(async () => {
  h = await startHarness({ worker: false });
  c = await seedCallers(h);
});
afterAll(() => h?.close());

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';
let seq = 0;
const uniqueSlug = (stem = 'item') => `${stem}-${Date.now().toString(36)}-${seq++}`;

function call(method: 'GET' | 'POST' | 'PUT', url: string, headers: Record<string, string>, body?: unknown) {
  return h.app.inject({
    method, url, headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    payload: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function create(body: Record<string, unknown>, headers = c.owner) {
  const res = await call('POST', '/api/products', headers, body);
  return { status: res.statusCode, body: res.json() };
}

async function skuRows(productId: string) {
  const rows = await h.orm.em.fork().find(ProductSku, { product: productId }, { orderBy: { sku: 'asc' } });
  return rows.map((r) => ({ sku: r.sku, isSlug: r.isSlug }));
}

describe('auth and roles on every product endpoint', () => {
  const endpoints: Array<[string, 'GET' | 'POST' | 'PUT', () => string, unknown]> = [
    ['list', 'GET', () => '/api/products', undefined],
    ['get', 'GET', () => `/api/products/${UNKNOWN_ID}`, undefined],
    ['create', 'POST', () => '/api/products', { name: 'X', slug: 'x' }],
    ['update', 'PUT', () => `/api/products/${UNKNOWN_ID}`, { name: 'X' }],
  ];
  for (const [endpoint, method, url, body] of endpoints) {
    test.each(AUTH_FAILURES)(`${endpoint}: %s → %i with {error}`, async (_case, status, headers) => {
      const res = await call(method, url(), headers(c), body);
      expect(res.statusCode).toBe(status);
      expect(typeof res.json().error).toBe('string');
    });
  }

  test('auth comes before validation: an invalid body without a key is 401, not 400', async () => {
    expect((await call('POST', '/api/products', {}, { nonsense: 1 })).statusCode).toBe(401);
    expect((await call('POST', '/api/products', c.expired, { nonsense: 1 })).statusCode).toBe(403);
  });

  test('X-API-Key works like Bearer', async () => {
    const key = c.owner.authorization.replace('Bearer ', '');
    const res = await call('GET', '/api/products', { 'x-api-key': key });
    expect(res.statusCode).toBe(200);
    expect(Array.isArray(res.json())).toBe(true);
  });

  test('a member reads and writes products', async () => {
    const created = await create({ name: 'By a member', slug: uniqueSlug('member') }, c.member);
    expect(created.status).toBe(201);
    const updated = await call('PUT', `/api/products/${created.body.id}`, c.member, { status: 'published' });
    expect(updated.statusCode).toBe(200);
    expect((await call('GET', `/api/products/${created.body.id}`, c.member)).statusCode).toBe(200);
    expect((await call('GET', '/api/products', c.member)).statusCode).toBe(200);
  });
});

describe('GET /api/products', () => {
  test('a new organisation gets an empty array', async () => {
    const fresh = await seedOrganisation(h);
    const res = await call('GET', '/api/products', { authorization: `Bearer ${fresh.apiKey}` });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual([]);
  });

  test('lists {product, activeVersion} oldest first, only of the caller\'s organisation', async () => {
    const org = await seedOrganisation(h);
    const headers = { authorization: `Bearer ${org.apiKey}` };
    const live = await seedProduct(h, org.orgId, { slug: uniqueSlug('live'), name: 'Live one', skus: ['EXTRA-B', 'extra-a'] });
    const bare = await seedProduct(h, org.orgId, { slug: uniqueSlug('bare'), status: 'draft', withVersion: false });
    await seedProduct(h, c.otherOrgId, { slug: uniqueSlug('theirs') });

    const res = await call('GET', '/api/products', headers);
    expect(res.statusCode).toBe(200);
    const list = res.json();
    expect(list.map((e: { product: { id: string } }) => e.product.id)).toEqual([live.productId, bare.productId]);

    const [first, second] = list;
    expect(Object.keys(first).sort()).toEqual(['activeVersion', 'product']);
    expect(Object.keys(first.product).sort()).toEqual([
      'activeVersionId', 'createdAt', 'description', 'downloadLimit', 'id', 'licenseKeys', 'name', 'orgId', 'skus', 'slug', 'stampPdfs', 'status', 'updatedAt',
    ]);
    expect(first.product).toMatchObject({
      id: live.productId, orgId: org.orgId, name: 'Live one', status: 'published',
      activeVersionId: live.versionId, skus: ['extra-a', 'extra-b'], description: '',
    });
    expect(new Date(first.product.createdAt).toISOString()).toBe(first.product.createdAt);
    expect(new Date(first.product.updatedAt).toISOString()).toBe(first.product.updatedAt);
    expect(first.activeVersion).toEqual({ id: live.versionId, productId: live.productId, version: '1.0.0', status: 'ready' });
    expect(second.product).toMatchObject({ id: bare.productId, status: 'draft', activeVersionId: null, skus: [] });
    expect(second.activeVersion).toBeNull();
  });
});

describe('GET /api/products from an API process that answered it before', () => {
  // A second app on the same database: another API process, with listings of its own kept.
  let other: FastifyInstance;
  beforeAll(async () => {
    other = await buildApiApp({ config: h.config, orm: h.orm, starter: h.starter, storage: h.storage, clock: () => new Date() });
    await other.ready();
  });
  afterAll(() => other?.close());

  test('answers every change made since, by any process or by SQL', async () => {
    const org = await seedOrganisation(h);
    const headers = { authorization: `Bearer ${org.apiKey}` };
    const listing = async () => {
      const res = await other.inject({ method: 'GET', url: '/api/products', headers });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      return res.json() as Array<{ product: { id: string; name: string; skus: string[] }; activeVersion: { version: string } | null }>;
    };
    expect(await listing()).toEqual([]);

    const seeded = await seedProduct(h, org.orgId, { slug: uniqueSlug('kept'), name: 'Kept', skus: ['first'] });
    expect((await listing()).map((e) => e.product.id)).toEqual([seeded.productId]);
    expect(await listing()).toEqual(await listing());

    // Through the API of the first process.
    expect((await call('PUT', `/api/products/${seeded.productId}`, headers, { name: 'Renamed', skus: ['second'] })).statusCode).toBe(200);
    expect((await listing())[0].product).toMatchObject({ name: 'Renamed', skus: ['second'] });

    // Straight in the database, whatever code writes it: the active version, a SKU, the product.
    await h.orm.em.fork().nativeUpdate(ProductVersion, { id: seeded.versionId }, { version: '1.0.1' });
    expect((await listing())[0].activeVersion?.version).toBe('1.0.1');
    await h.orm.em.fork().nativeDelete(ProductSku, { product: seeded.productId, isSlug: false });
    expect((await listing())[0].product.skus).toEqual([]);
    await h.orm.em.fork().nativeDelete(Product, { id: seeded.productId });
    expect(await listing()).toEqual([]);
  });

  test('one organisation\'s change leaves another\'s listing as it was', async () => {
    const [mine, theirs] = [await seedOrganisation(h), await seedOrganisation(h)];
    await seedProduct(h, mine.orgId, { slug: uniqueSlug('mine') });
    const before = await other.inject({ method: 'GET', url: '/api/products', headers: { authorization: `Bearer ${mine.apiKey}` } });
    const version = async (orgId: string) => (await h.orm.em.fork().findOneOrFail(Organisation, orgId)).catalogueVersion;
    const mineBefore = await version(mine.orgId);
    await seedProduct(h, theirs.orgId, { slug: uniqueSlug('theirs') });
    expect(await version(mine.orgId)).toBe(mineBefore);
    const after = await other.inject({ method: 'GET', url: '/api/products', headers: { authorization: `Bearer ${mine.apiKey}` } });
    expect(after.body).toBe(before.body);
  });
});

describe('GET /api/products/{productId}', () => {
  test('answers {product, activeVersion}', async () => {
    const seeded = await seedProduct(h, c.orgId, { slug: uniqueSlug('one') });
    const res = await call('GET', `/api/products/${seeded.productId}`, c.owner);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.product).toMatchObject({ id: seeded.productId, orgId: c.orgId, activeVersionId: seeded.versionId });
    expect(body.activeVersion).toEqual({ id: seeded.versionId, productId: seeded.productId, version: '1.0.0', status: 'ready' });
  });

  test.each([
    ['an unknown id', () => UNKNOWN_ID],
    ['a malformed id', () => 'not-a-uuid'],
    ['a slug instead of the id', () => 'ebook-pro'],
  ])('%s → 404 {error}', async (_case, id) => {
    const res = await call('GET', `/api/products/${id()}`, c.owner);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'product not found' });
  });

  test('another organisation\'s product → 404, no data', async () => {
    const theirs = await seedProduct(h, c.otherOrgId, { slug: uniqueSlug('theirs') });
    const res = await call('GET', `/api/products/${theirs.productId}`, c.owner);
    expect(res.statusCode).toBe(404);
    expect(res.body).not.toContain(theirs.productId);
    // ... and its owner does see it.
    expect((await call('GET', `/api/products/${theirs.productId}`, c.other)).statusCode).toBe(200);
  });
});

describe('POST /api/products', () => {
  test('201 with the created row: draft, description, skus; no activeVersionId or updatedAt', async () => {
    const slug = uniqueSlug('ebook');
    const res = await call('POST', '/api/products', c.owner, { name: '  Ebook Pro ', slug, description: 'The book.' });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['createdAt', 'description', 'downloadLimit', 'id', 'licenseKeys', 'name', 'orgId', 'skus', 'slug', 'stampPdfs', 'status']);
    expect(body).toMatchObject({ orgId: c.orgId, name: 'Ebook Pro', slug, description: 'The book.', status: 'draft', skus: [] });
    const row = await h.orm.em.fork().findOneOrFail(Product, body.id);
    expect(row.organisation.id).toBe(c.orgId);
    expect(await skuRows(body.id)).toEqual([{ sku: slug, isSlug: true }]);
  });

  test.each([
    ['My Product', 'my-product'],
    ['  Spaces   and_underscores  ', 'spaces-and-underscores'],
    ['UPPER--case__mix', 'upper-case-mix'],
    ['émoji 🎉 & co!', 'moji-co'],
    ['--trim-hyphens--', 'trim-hyphens'],
    ['v2.0 beta', 'v20-beta'],
  ])('slug %j is stored as %j', async (input, expected) => {
    const suffix = uniqueSlug('s');
    const res = await create({ name: 'Slugged', slug: `${input} ${suffix}` });
    expect(res.status).toBe(201);
    expect(res.body.slug).toBe(`${expected}-${suffix}`);
  });

  test.each([
    ['no name', 'name is required', { slug: 'a-slug' }],
    ['a blank name', 'name is required', { name: '   ', slug: 'a-slug' }],
    ['no slug', 'slug is required', { name: 'A name' }],
    ['a blank slug', 'slug is required', { name: 'A name', slug: '  ' }],
    ['a slug with nothing usable', 'slug must contain at least one letter or digit', { name: 'A name', slug: '!!! ***' }],
    ['an empty SKU', 'skus must not contain empty strings', { name: 'A name', slug: 'sku-empty', skus: ['ok', '  '] }],
  ])('%s → 400 %j', async (_case, message, body) => {
    const res = await create(body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: message });
  });

  test.each([
    ['a name that is not a string', { name: 42, slug: 'typed' }],
    ['skus that are not an array', { name: 'N', slug: 'typed', skus: 'abc' }],
    ['a body that is not an object', []],
  ])('%s → 400 {error}', async (_case, body) => {
    const res = await call('POST', '/api/products', c.owner, body);
    expect(res.statusCode).toBe(400);
    expect(typeof res.json().error).toBe('string');
  });

  test('malformed JSON → 400 {error}', async () => {
    const res = await h.app.inject({
      method: 'POST', url: '/api/products', headers: { ...c.owner, 'content-type': 'application/json' }, payload: '{"name":',
    });
    expect(res.statusCode).toBe(400);
    expect(typeof res.json().error).toBe('string');
  });

  test('a duplicate slug in the organisation → 409, also after normalising; nothing created', async () => {
    const slug = uniqueSlug('dup');
    expect((await create({ name: 'First', slug })).status).toBe(201);
    const before = await h.orm.em.fork().count(Product, {});
    const res = await create({ name: 'Second', slug: `  ${slug.toUpperCase().replace(/-/g, '_')} ` });
    expect(res.status).toBe(409);
    expect(res.body.error).toContain(slug);
    expect(await h.orm.em.fork().count(Product, {})).toBe(before);
  });

  test('the same slug in another organisation is fine', async () => {
    const slug = uniqueSlug('shared');
    expect((await create({ name: 'Ours', slug })).status).toBe(201);
    expect((await create({ name: 'Theirs', slug }, c.other)).status).toBe(201);
  });

  test('concurrent creates of one slug: exactly one 201, the rest 409 (the unique key decides)', async () => {
    const slug = uniqueSlug('race');
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => create({ name: `Racer ${i}`, slug })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409, 409, 409]);
    expect(await h.orm.em.fork().count(Product, { organisation: c.orgId, slug })).toBe(1);
  });

  test('concurrent creates claiming one SKU: exactly one wins', async () => {
    const sku = uniqueSlug('race-sku');
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => create({ name: `Racer ${i}`, slug: uniqueSlug('racer'), skus: [sku] })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
    expect(await h.orm.em.fork().count(ProductSku, { organisation: c.orgId, sku })).toBe(1);
  });

  describe('SKUs', () => {
    test('are normalised (trimmed, lower-case), de-duplicated, and the slug is not repeated among them', async () => {
      const slug = uniqueSlug('skus');
      const res = await create({ name: 'Skus', slug, skus: ['  ABC-1 ', 'abc-1', 'Zed', slug.toUpperCase()] });
      expect(res.status).toBe(201);
      expect(res.body.skus).toEqual(['abc-1', 'zed']);
      expect(await skuRows(res.body.id)).toEqual(
        [{ sku: 'abc-1', isSlug: false }, { sku: slug, isSlug: true }, { sku: 'zed', isSlug: false }]
          .sort((a, b) => a.sku.localeCompare(b.sku)),
      );
    });

    test('a SKU that maps to another product (any case) → 409, nothing created', async () => {
      const sku = uniqueSlug('owned').toUpperCase();
      expect((await create({ name: 'Owner', slug: uniqueSlug('owner'), skus: [sku] })).status).toBe(201);
      const before = await h.orm.em.fork().count(Product, {});
      const res = await create({ name: 'Thief', slug: uniqueSlug('thief'), skus: [` ${sku.toLowerCase()}`] });
      expect(res.status).toBe(409);
      expect(res.body.error).toContain(sku.toLowerCase());
      expect(await h.orm.em.fork().count(Product, {})).toBe(before);
    });

    test('a SKU equal to another product\'s slug → 409', async () => {
      const slug = uniqueSlug('slugged');
      expect((await create({ name: 'Slug owner', slug })).status).toBe(201);
      const res = await create({ name: 'Thief', slug: uniqueSlug('thief'), skus: [slug.toUpperCase()] });
      expect(res.status).toBe(409);
    });

    test('a slug equal to another product\'s extra SKU → 409', async () => {
      const sku = uniqueSlug('extra');
      expect((await create({ name: 'Extra owner', slug: uniqueSlug('x'), skus: [sku] })).status).toBe(201);
      const res = await create({ name: 'Thief', slug: sku });
      expect(res.status).toBe(409);
      expect(res.body.error).toContain('slug');
    });

    test('SKUs of another organisation do not clash', async () => {
      const sku = uniqueSlug('free');
      expect((await create({ name: 'Ours', slug: uniqueSlug('o'), skus: [sku] })).status).toBe(201);
      expect((await create({ name: 'Theirs', slug: uniqueSlug('t'), skus: [sku] }, c.other)).status).toBe(201);
    });
  });
});

describe('PUT /api/products/{productId}', () => {
  async function fresh(skus: string[] = []) {
    const res = await create({ name: 'Editable', slug: uniqueSlug('edit'), description: 'before', skus });
    expect(res.status).toBe(201);
    return res.body as { id: string; slug: string; createdAt: string };
  }
  const put = (id: string, body: unknown, headers = c.owner) => call('PUT', `/api/products/${id}`, headers, body);

  test('merges the given fields and answers the full row; unknown keys are ignored', async () => {
    const p = await fresh(['keep-me']);
    const res = await put(p.id, { name: 'Renamed', status: 'published', id: UNKNOWN_ID, orgId: c.otherOrgId, colour: 'red' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual([
      'activeVersionId', 'createdAt', 'description', 'downloadLimit', 'id', 'licenseKeys', 'name', 'orgId', 'skus', 'slug', 'stampPdfs', 'status', 'updatedAt',
    ]);
    expect(body).toMatchObject({
      id: p.id, orgId: c.orgId, name: 'Renamed', description: 'before', status: 'published', slug: p.slug,
      skus: ['keep-me'], activeVersionId: null, createdAt: p.createdAt,
    });
    expect(body.updatedAt >= body.createdAt).toBe(true);
    const again = await call('GET', `/api/products/${p.id}`, c.owner);
    expect(again.json().product).toEqual(body);
  });

  test.each(['draft', 'published', 'archived'])('status %s is accepted', async (status) => {
    const p = await fresh();
    const res = await put(p.id, { status });
    expect(res.statusCode).toBe(200);
    expect(res.json().status).toBe(status);
  });

  test('an empty body changes nothing but updatedAt', async () => {
    const p = await fresh(['a1']);
    const res = await put(p.id, {});
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ name: 'Editable', description: 'before', slug: p.slug, skus: ['a1'], status: 'draft' });
  });

  test.each([
    ['an unknown status', { status: 'live' }],
    ['a blank name', { name: ' ' }],
    ['a slug with nothing usable', { slug: '###' }],
    ['skus not an array', { skus: 'abc' }],
    ['activeVersionId not a string', { activeVersionId: 5 }],
  ])('%s → 400 {error}', async (_case, body) => {
    const p = await fresh();
    const res = await put(p.id, body);
    expect(res.statusCode).toBe(400);
    expect(typeof res.json().error).toBe('string');
  });

  test.each([
    ['an unknown id', () => UNKNOWN_ID],
    ['a malformed id', () => 'nope'],
  ])('%s → 404', async (_case, id) => {
    expect((await put(id(), { name: 'x' })).statusCode).toBe(404);
  });

  test('another organisation\'s product → 404 and stays unchanged', async () => {
    const theirs = await seedProduct(h, c.otherOrgId, { slug: uniqueSlug('theirs'), name: 'Theirs' });
    const res = await put(theirs.productId, { name: 'Hijacked', status: 'archived' });
    expect(res.statusCode).toBe(404);
    const row = await h.orm.em.fork().findOneOrFail(Product, theirs.productId);
    expect(row.name).toBe('Theirs');
    expect(row.status).toBe('published');
  });

  test('slug is re-normalised and its SKU row follows', async () => {
    const p = await fresh(['extra-1']);
    const wanted = uniqueSlug('moved');
    const res = await put(p.id, { slug: ` ${wanted.toUpperCase()} ` });
    expect(res.statusCode).toBe(200);
    expect(res.json().slug).toBe(wanted);
    expect(await skuRows(p.id)).toEqual([{ sku: 'extra-1', isSlug: false }, { sku: wanted, isSlug: true }]);
  });

  test('a slug used by another product → 409, nothing changes', async () => {
    const a = await fresh();
    const b = await fresh();
    const res = await put(b.id, { slug: a.slug, name: 'Changed' });
    expect(res.statusCode).toBe(409);
    const row = await h.orm.em.fork().findOneOrFail(Product, b.id);
    expect(row.slug).toBe(b.slug);
    expect(row.name).toBe('Editable');
  });

  test('skus replace the extra SKUs', async () => {
    const p = await fresh(['old-1', 'old-2']);
    const res = await put(p.id, { skus: ['OLD-2', 'New-3'] });
    expect(res.statusCode).toBe(200);
    expect(res.json().skus).toEqual(['new-3', 'old-2']);
    expect(await skuRows(p.id)).toEqual(
      [{ sku: 'new-3', isSlug: false }, { sku: 'old-2', isSlug: false }, { sku: p.slug, isSlug: true }]
        .sort((x, y) => x.sku.localeCompare(y.sku)),
    );
    expect((await put(p.id, { skus: [] })).json().skus).toEqual([]);
  });

  test('slug and an extra SKU can swap places in one call', async () => {
    const extra = uniqueSlug('swap');
    const p = await fresh([extra]);
    const res = await put(p.id, { slug: extra, skus: [p.slug] });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ slug: extra, skus: [p.slug] });
  });

  test('taking an extra SKU as the new slug, skus not given, drops it from the extras', async () => {
    const extra = uniqueSlug('promote');
    const p = await fresh([extra, 'stays']);
    const res = await put(p.id, { slug: extra });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ slug: extra, skus: ['stays'] });
  });

  test('a SKU of another product (any case) → 409, SKUs unchanged', async () => {
    const sku = uniqueSlug('taken');
    await fresh([sku]);
    const p = await fresh(['mine']);
    const res = await put(p.id, { skus: ['mine', sku.toUpperCase()] });
    expect(res.statusCode).toBe(409);
    expect(res.json().error).toContain(sku);
    expect(await skuRows(p.id)).toEqual(
      [{ sku: 'mine', isSlug: false }, { sku: p.slug, isSlug: true }].sort((x, y) => x.sku.localeCompare(y.sku)),
    );
  });

  describe('activeVersionId', () => {
    test('a ready version of this product → 200; GET shows it; null clears it', async () => {
      const seeded = await seedProduct(h, c.orgId, { slug: uniqueSlug('versioned') });
      const em = h.orm.em.fork();
      const second = em.create(ProductVersion, { product: seeded.productId, version: '2.0.0' });
      await em.flush();

      const res = await put(seeded.productId, { activeVersionId: second.id });
      expect(res.statusCode).toBe(200);
      expect(res.json().activeVersionId).toBe(second.id);
      const got = (await call('GET', `/api/products/${seeded.productId}`, c.owner)).json();
      expect(got.activeVersion).toEqual({ id: second.id, productId: seeded.productId, version: '2.0.0', status: 'ready' });

      const cleared = await put(seeded.productId, { activeVersionId: null });
      expect(cleared.statusCode).toBe(200);
      expect(cleared.json().activeVersionId).toBeNull();
      expect((await call('GET', `/api/products/${seeded.productId}`, c.owner)).json().activeVersion).toBeNull();
    });

    test.each([
      ['a version of another product', async () => (await seedProduct(h, c.orgId, { slug: uniqueSlug('other') })).versionId],
      ['a version of another organisation', async () => (await seedProduct(h, c.otherOrgId, { slug: uniqueSlug('their') })).versionId],
      ['an unknown id', async () => UNKNOWN_ID],
      ['a malformed id', async () => 'v1.0.0'],
    ])('%s → 400, the active version stays', async (_case, versionId) => {
      const seeded = await seedProduct(h, c.orgId, { slug: uniqueSlug('guarded') });
      const res = await put(seeded.productId, { activeVersionId: await versionId(), name: 'Not applied' });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: 'activeVersionId must be the id of a ready version of this product' });
      const row = await h.orm.em.fork().findOneOrFail(Product, seeded.productId);
      expect(row.activeVersion?.id).toBe(seeded.versionId);
      expect(row.name).not.toBe('Not applied');
    });
  });
});

test('/openapi.json documents the product routes with their schemas', async () => {
  const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  expect(Object.keys(doc.paths['/api/products']).sort()).toEqual(['get', 'post']);
  expect(Object.keys(doc.paths['/api/products/{productId}']).sort()).toEqual(['get', 'put']);
  const post = doc.paths['/api/products'].post;
  expect(Object.keys(post.requestBody.content['application/json'].schema.properties).sort())
    .toEqual(['description', 'downloadLimit', 'licenseKeys', 'name', 'skus', 'slug', 'stampPdfs']);
  expect(post.responses['201'].content['application/json'].schema.properties).toHaveProperty('slug');
  expect(post.responses['409'].content['application/json'].schema.properties).toHaveProperty('error');
  const list = doc.paths['/api/products'].get.responses['200'].content['application/json'].schema;
  expect(list.items.properties).toHaveProperty('activeVersion');
});
