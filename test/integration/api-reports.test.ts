import { ActivityLogEntry, Customer, Purchase } from '../../src/db/entities';
import type { ActivityKind } from '../../src/purchases/activity-log-entry.entity';
import { AUTH_FAILURES, seedCallers, type ApiCallers } from '../helpers/api-callers';
import { startHarness, type Harness } from '../helpers/harness';
import { seedProduct, seedUser, type SeededProduct } from '../helpers/seed';

let h: Harness;
let c: ApiCallers;
let product: SeededProduct;
let purchaseId: string;
let trickyPurchaseId: string;

const HEADER = 'downloaded_at,customer_email,customer_name,product_id,product_name,version,purchase_id,file_name,bytes,ip';

async function purchaseFor(orgId: string, productId: string, email: string, name: string): Promise<string> {
  const em = h.orm.em.fork();
  const customer = em.create(Customer, { organisation: orgId, email, name });
  const purchase = em.create(Purchase, {
    organisation: orgId, product: productId, customer, amount: '10.0000', currency: 'USD', paymentMethod: 'custom', source: 'api',
  });
  await em.flush();
  return purchase.id;
}

async function activity(orgId: string, purchase: string, at: string, extra: { kind?: ActivityKind; file?: string | null; bytes?: number | null; ip?: string | null } = {}) {
  const em = h.orm.em.fork();
  em.create(ActivityLogEntry, {
    organisation: orgId, kind: 'file_download', purchase, file: product.fileId, bytes: product.fileBytes.length,
    ip: '203.0.113.7', createdAt: new Date(at), ...extra,
  });
  await em.flush();
}

beforeAll(async () => {
  h = await startHarness({ worker: false });
  c = await seedCallers(h);
  product = await seedProduct(h, c.orgId, { slug: 'ebook-pro', name: 'Ebook Pro' });
  purchaseId = await purchaseFor(c.orgId, product.productId, 'ada@example.com', 'Ada Buyer');
  trickyPurchaseId = await purchaseFor(c.orgId, product.productId, 'eve@example.com', '=HYPERLINK("http://evil"), "Eve"');

  await activity(c.orgId, purchaseId, '2026-02-28T23:59:59.999Z'); // the day before: out
  await activity(c.orgId, purchaseId, '2026-03-01T00:00:00.000Z'); // first instant of from: in
  await activity(c.orgId, trickyPurchaseId, '2026-03-01T12:00:00.000Z', { ip: null, bytes: null });
  await activity(c.orgId, purchaseId, '2026-03-01T13:00:00.000Z', { kind: 'download_session', file: null }); // not a file transfer
  await activity(c.orgId, purchaseId, '2026-03-02T23:59:59.999Z', { ip: '2001:db8::1' }); // last instant of to: in
  await activity(c.orgId, purchaseId, '2026-03-03T00:00:00.000Z'); // the day after: out

  // Another organisation's download inside the range is not ours to see.
  const theirs = await seedProduct(h, c.otherOrgId, { slug: 'theirs' });
  const theirPurchase = await purchaseFor(c.otherOrgId, theirs.productId, 'ada@example.com', 'Their Ada');
  await activity(c.otherOrgId, theirPurchase, '2026-03-01T10:00:00.000Z', { file: theirs.fileId });
});
afterAll(() => h?.close());

function report(query: string, headers: Record<string, string> = c.owner) {
  return h.app.inject({ method: 'GET', url: `/api/reports/downloads${query}`, headers });
}

test('one CSV row per completed file transfer of the organisation in [from 00:00Z, to + 1 00:00Z)', async () => {
  const res = await report('?from=2026-03-01&to=2026-03-02');
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/csv/);
  expect(res.headers['content-disposition']).toBe('attachment; filename="downloads-2026-03-01-2026-03-02.csv"');
  const size = product.fileBytes.length;
  const file = 'ebook-pro.txt';
  expect(res.body).toBe([
    HEADER,
    `2026-03-01T00:00:00.000Z,ada@example.com,Ada Buyer,${product.productId},Ebook Pro,1.0.0,${purchaseId},${file},${size},203.0.113.7`,
    // A formula-looking cell is neutralised with a leading quote, and quoted as CSV requires.
    `2026-03-01T12:00:00.000Z,eve@example.com,"'=HYPERLINK(""http://evil""), ""Eve""",${product.productId},Ebook Pro,1.0.0,${trickyPurchaseId},${file},,`,
    `2026-03-02T23:59:59.999Z,ada@example.com,Ada Buyer,${product.productId},Ebook Pro,1.0.0,${purchaseId},${file},${size},2001:db8::1`,
    '',
  ].join('\n'));
});

test('from = to is that one day; a range with nothing is the header alone', async () => {
  expect((await report('?from=2026-03-02&to=2026-03-02')).body.trim().split('\n')).toHaveLength(2);
  expect((await report('?from=2025-01-01&to=2025-01-31')).body).toBe(`${HEADER}\n`);
});

test('an admin gets the report too', async () => {
  const admin = await seedUser(h, c.orgId, 'admin');
  const res = await report('?from=2026-03-01&to=2026-03-02', { authorization: `Bearer ${admin.apiKey}` });
  expect(res.statusCode).toBe(200);
  expect(res.body.trim().split('\n')).toHaveLength(4);
});

test('thousands of rows stream across batches complete and in order', async () => {
  await h.orm.em.fork().execute(
    `insert into activity_log_entry (id, organisation_id, kind, purchase_id, file_id, bytes, ip, created_at)
     select gen_random_uuid(), ?, 'file_download', ?, ?, g, '198.51.100.1', timestamptz '2026-05-01' + g * interval '1 second'
     from generate_series(1, 2500) g`,
    [c.orgId, purchaseId, product.fileId],
  );
  const res = await report('?from=2026-05-01&to=2026-05-01');
  const lines = res.body.trim().split('\n').slice(1);
  expect(lines).toHaveLength(2500);
  expect(lines.map((l) => Number(l.split(',')[8]))).toEqual(Array.from({ length: 2500 }, (_, i) => i + 1));
});

describe('errors are plain text', () => {
  test.each([
    ['', 400],
    ['?from=2026-03-01', 400],
    ['?to=2026-03-01', 400],
    ['?from=2026-3-1&to=2026-03-02', 400],
    ['?from=2026-02-30&to=2026-03-02', 400],
    ['?from=yesterday&to=today', 400],
    ['?from=2026-03-02&to=2026-03-01', 400],
    ['?from=2026-03-01&from=2026-03-02&to=2026-03-05', 400],
  ])('%s → %i', async (query, status) => {
    const res = await report(query);
    expect(res.statusCode).toBe(status);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.body.length).toBeGreaterThan(0);
    expect(res.body).not.toContain('{');
  });

  test('a member is refused: 403 admin role required', async () => {
    const res = await report('?from=2026-03-01&to=2026-03-02', c.member);
    expect(res.statusCode).toBe(403);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.body.trim()).toBe('admin role required: only owners and admins may do this');
  });

  test('a member is refused before the dates are looked at', async () => {
    expect((await report('?from=bad', c.member)).statusCode).toBe(403);
  });

  test.each(AUTH_FAILURES)('%s → %i in plain text', async (_case, status, headers) => {
    const res = await report('?from=2026-03-01&to=2026-03-02', headers(c));
    expect(res.statusCode).toBe(status);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.body).not.toContain('{');
  });
});
