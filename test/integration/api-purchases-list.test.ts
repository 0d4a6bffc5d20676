import { startHarness, type Harness } from '../helpers/harness';
import { insertPurchases } from '../helpers/bulk-purchases';
import { seedOrganisation, seedProduct, type SeededProduct } from '../helpers/seed';
import { Customer, Purchase } from '../../src/db/entities';

let h: Harness;
let org: { orgId: string; apiKey: string };
let other: { orgId: string; apiKey: string };
let product: SeededProduct;

beforeAll(async () => {
  h = await startHarness({ worker: false });
  org = await seedOrganisation(h);
  other = await seedOrganisation(h);
  product = await seedProduct(h, org.orgId);
});
afterAll(() => h?.close());

function list(query = '', apiKey = org.apiKey) {
  return h.app.inject({ method: 'GET', url: `/api/purchases${query}`, headers: { authorization: `Bearer ${apiKey}` } });
}

interface Listed {
  id: string;
  amount: string;
  currency: string;
  createdAt: string;
  customer: { id: string; email: string };
}

describe('one purchase of each kind', () => {
  const made: Record<string, string> = {};

  beforeAll(async () => {
    const em = h.orm.em.fork();
    const customer = em.create(Customer, { organisation: org.orgId, email: 'ada@example.com', name: 'Ada Buyer' });
    const rows: Array<[string, string, string, string]> = [
      ['usd', '19.9900', 'USD', '2030-01-01T10:00:00.000Z'],
      ['usdWhole', '29.0000', 'USD', '2030-01-01T10:00:01.000Z'],
      ['jpy', '500.0000', 'JPY', '2030-01-01T10:00:02.000Z'],
      ['kwd', '1.2340', 'KWD', '2030-01-01T10:00:03.000Z'],
    ];
    for (const [name, amount, currency, createdAt] of rows) {
      const purchase = em.create(Purchase, {
        organisation: org.orgId, product: product.productId, version: product.versionId || null, customer,
        amount, currency, paymentMethod: 'custom', source: 'storefront-a', externalOrderId: `order-${name}`,
        test: name === 'jpy', receiptSentAt: name === 'usd' ? new Date('2030-01-01T10:00:05.000Z') : null,
        createdAt: new Date(createdAt),
      });
      made[name] = purchase.id;
    }
    await em.flush();
  });

  test('the shape of decisions §3, newest first, amounts with the currency\'s minor digits', async () => {
    const res = await list('?limit=4');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const body = res.json() as Listed[];
    expect(body.map((p) => p.id)).toEqual([made.kwd, made.jpy, made.usdWhole, made.usd]);
    expect(body.map((p) => p.amount)).toEqual(['1.234', '500', '29.00', '19.99']);
    expect(body[3]).toEqual({
      id: made.usd,
      productId: product.productId,
      versionId: product.versionId,
      customer: { id: expect.any(String), name: 'Ada Buyer', email: 'ada@example.com' },
      amount: '19.99',
      currency: 'USD',
      paymentMethod: 'custom',
      source: 'storefront-a',
      externalOrderId: 'order-usd',
      test: false,
      receiptSentAt: '2030-01-01T10:00:05.000Z',
      createdAt: '2030-01-01T10:00:00.000Z',
      revokedAt: null,
      revokeReason: null,
      downloadLimit: null,
      licenseKey: null,
    });
    expect(body[1]).toMatchObject({ currency: 'JPY', test: true, receiptSentAt: null });
  });

  test('another organisation sees none of them', async () => {
    const res = await list('', other.apiKey);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual([]);
  });

  test('paging: limit, then after the last id', async () => {
    const first = (await list('?limit=2')).json() as Listed[];
    expect(first.map((p) => p.id)).toEqual([made.kwd, made.jpy]);
    const second = (await list(`?limit=2&after=${first[1].id}`)).json() as Listed[];
    expect(second.map((p) => p.id)).toEqual([made.usdWhole, made.usd]);
  });

  test.each([
    ['limit=0', 400],
    ['limit=-1', 400],
    ['limit=1001', 400],
    ['limit=abc', 400],
    ['limit=1.5', 400],
    ['limit=1&limit=2', 400],
    ['after=not-a-uuid', 404],
    ['after=00000000-0000-4000-8000-000000000000', 404],
  ])('?%s → %i {error}', async (query, status) => {
    const res = await list(`?${query}`);
    expect(res.statusCode).toBe(status);
    expect(res.json()).toEqual({ error: expect.any(String) });
  });

  test('after naming another organisation\'s purchase is 404, not data', async () => {
    const res = await list(`?after=${made.usd}`, other.apiKey);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: expect.any(String) });
  });
});

test('thousands of purchases stream across batches complete, in order, without duplicates', async () => {
  const big = await seedOrganisation(h);
  const bigProduct = await seedProduct(h, big.orgId);
  await insertPurchases(h.orm.em.fork(), {
    orgId: big.orgId, productId: bigProduct.productId, versionId: bigProduct.versionId, count: 2_345, customers: 50, tag: 'list',
  });
  // Three purchases in the same microsecond across the edge of the first 1000-row batch (newest
  // first: positions 998 to 1000): the id breaks the tie, none is lost or repeated there.
  await h.orm.em.fork().execute(
    `update purchase set created_at = (select created_at from purchase where organisation_id = ? order by created_at desc limit 1 offset 999)
     where id in (select id from purchase where organisation_id = ? order by created_at desc limit 3 offset 998)`,
    [big.orgId, big.orgId],
  );

  const res = await list('', big.apiKey);
  expect(res.statusCode).toBe(200);
  const body = res.json() as Listed[];
  expect(body).toHaveLength(2_345);
  expect(new Set(body.map((p) => p.id)).size).toBe(2_345);
  const times = body.map((p) => p.createdAt);
  expect([...times].sort().reverse()).toEqual(times);

  // Pages over HTTP give the same sequence.
  const paged: Listed[] = [];
  let after = '';
  for (;;) {
    const page = (await list(`?limit=1000${after ? `&after=${after}` : ''}`, big.apiKey)).json() as Listed[];
    paged.push(...page);
    if (page.length < 1000) break;
    after = page[page.length - 1].id;
  }
  expect(paged.map((p) => p.id)).toEqual(body.map((p) => p.id));
});
