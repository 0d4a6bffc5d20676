import { UnmatchedSku, WebhookDelivery, WebhookDeliveryItem } from '../../src/db/entities';
import type { DeliveryStatus, ItemOutcome } from '../../src/domain/statuses';
import type { Platform } from '../../src/domain/platforms';
import { startHarness, type Harness } from '../helpers/harness';
import { seedOrganisation, seedProduct } from '../helpers/seed';

let h: Harness;
let org: { orgId: string; apiKey: string };
let other: { orgId: string; apiKey: string };
let productId: string;
const ids: Record<string, string> = {};

interface Line { sku: string | null; outcome: ItemOutcome | null; reason?: string; product?: boolean }

async function delivery(orgId: string, name: string, platform: Platform, status: DeliveryStatus, receivedAt: string, lines: Line[], extra: Partial<WebhookDelivery> = {}) {
  const em = h.orm.em.fork();
  const d = em.create(WebhookDelivery, {
    organisation: orgId, platform, externalOrderId: `order-${name}`, status, receivedAt: new Date(receivedAt),
    unmatched: lines.some((l) => l.outcome === 'unmatched'), workflowIds: [`fulfil/${orgId}/${platform}/order-${name}/x`], ...extra,
  });
  lines.forEach((l, lineIndex) => em.create(WebhookDeliveryItem, {
    delivery: d, lineIndex, sku: l.sku, outcome: l.outcome, reason: l.reason ?? null, product: l.product ? productId : null,
  }));
  await em.flush();
  ids[name] = d.id;
}

beforeAll(async () => {
  h = await startHarness({ worker: false });
  org = await seedOrganisation(h);
  other = await seedOrganisation(h);
  productId = (await seedProduct(h, org.orgId)).productId;
  await delivery(org.orgId, 'ok', 'storefront-a', 'Success', '2026-02-01T10:00:00.000Z', [
    { sku: 'EBOOK-PRO', outcome: 'fulfilled', product: true },
    { sku: 'course', outcome: 'duplicate', product: true },
  ], { completedAt: new Date('2026-02-01T10:00:02.500Z'), test: true });
  await delivery(org.orgId, 'bad', 'cart-e', 'Error', '2026-02-01T11:00:00.000Z', [
    { sku: 'nope', outcome: 'unmatched', reason: 'no product has this SKU' },
  ]);
  await delivery(org.orgId, 'running', 'plugin-b', 'Pending', '2026-02-01T12:00:00.000Z', [
    { sku: null, outcome: null, product: true },
  ]);
  await delivery(org.orgId, 'held', 'storefront-a', 'held', '2026-02-01T13:00:00.000Z', [
    { sku: 'draft-thing', outcome: 'held', reason: 'product is draft', product: true },
  ]);
  await delivery(other.orgId, 'theirs', 'storefront-a', 'Success', '2026-02-01T14:00:00.000Z', [
    { sku: 'x', outcome: 'fulfilled' },
  ]);
});
afterAll(() => h?.close());

function get(url: string, apiKey = org.apiKey) {
  return h.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${apiKey}` } });
}

describe('GET /api/webhook-deliveries', () => {
  test('the organisation\'s entries, newest first, each with its lines in order', async () => {
    const res = await get('/api/webhook-deliveries');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.map((d: { id: string }) => d.id)).toEqual([ids.held, ids.running, ids.bad, ids.ok]);
    expect(body[3]).toEqual({
      id: ids.ok,
      kind: 'order',
      platform: 'storefront-a',
      externalOrderId: 'order-ok',
      source: 'webhook',
      status: 'Success',
      unmatched: false,
      test: true,
      items: [
        { sku: 'EBOOK-PRO', productId, outcome: 'fulfilled', reason: null, purchaseId: null },
        { sku: 'course', productId, outcome: 'duplicate', reason: null, purchaseId: null },
      ],
      receivedAt: '2026-02-01T10:00:00.000Z',
      completedAt: '2026-02-01T10:00:02.500Z',
      workflowIds: [`fulfil/${org.orgId}/storefront-a/order-ok/x`],
    });
    expect(body[2]).toMatchObject({ status: 'Error', unmatched: true, completedAt: null, items: [{ sku: 'nope', outcome: 'unmatched', reason: 'no product has this SKU', productId: null }] });
    expect(body[1].items).toEqual([{ sku: null, productId, outcome: null, reason: null, purchaseId: null }]);
  });

  test.each([
    ['?status=Error', ['bad']],
    ['?status=held', ['held']],
    ['?status=Pending', ['running']],
    ['?platform=storefront-a', ['held', 'ok']],
    ['?platform=storefront-a&status=Success', ['ok']],
    ['?platform=reseller-d', []],
    ['?limit=2', ['held', 'running']],
  ])('%s', async (query, expected) => {
    const res = await get(`/api/webhook-deliveries${query}`);
    expect(res.statusCode).toBe(200);
    expect(res.json().map((d: { id: string }) => d.id)).toEqual(expected.map((name) => ids[name]));
  });

  test('after the last id of a page comes the next page', async () => {
    const res = await get(`/api/webhook-deliveries?limit=2&after=${ids.running}`);
    expect(res.json().map((d: { id: string }) => d.id)).toEqual([ids.bad, ids.ok]);
  });

  test.each([
    ['?status=error', 400],
    ['?status=Done', 400],
    ['?platform=shopify', 400],
    ['?platform=download-complete', 400],
    ['?status=Error&status=held', 400],
    ['?limit=0', 400],
    ['?after=nope', 404],
  ])('%s → %i {error}', async (query, status) => {
    const res = await get(`/api/webhook-deliveries${query}`);
    expect(res.statusCode).toBe(status);
    expect(res.json()).toEqual({ error: expect.any(String) });
  });

  test('another organisation sees only its own entries, and cannot page after ours', async () => {
    expect((await get('/api/webhook-deliveries', other.apiKey)).json().map((d: { id: string }) => d.id)).toEqual([ids.theirs]);
    expect((await get(`/api/webhook-deliveries?after=${ids.ok}`, other.apiKey)).statusCode).toBe(404);
  });
});

describe('GET /api/unmatched-skus', () => {
  test('empty until something is unmatched', async () => {
    const res = await get('/api/unmatched-skus');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ total: 0, skus: [] });
  });

  test('counts per platform and SKU, most recently seen first; total is their sum; organisations apart', async () => {
    const em = h.orm.em.fork();
    em.create(UnmatchedSku, { organisation: org.orgId, platform: 'cart-e', sku: 'nope', count: 3, lastSeenAt: new Date('2026-02-01T11:00:00.000Z') });
    em.create(UnmatchedSku, { organisation: org.orgId, platform: 'storefront-a', sku: 'OLD-SKU', count: 2, lastSeenAt: new Date('2026-02-02T00:00:00.000Z') });
    em.create(UnmatchedSku, { organisation: other.orgId, platform: 'cart-e', sku: 'theirs', count: 7 });
    await em.flush();
    expect((await get('/api/unmatched-skus')).json()).toEqual({
      total: 5,
      skus: [
        { platform: 'storefront-a', sku: 'OLD-SKU', count: 2, lastSeenAt: '2026-02-02T00:00:00.000Z' },
        { platform: 'cart-e', sku: 'nope', count: 3, lastSeenAt: '2026-02-01T11:00:00.000Z' },
      ],
    });
    expect((await get('/api/unmatched-skus', other.apiKey)).json()).toMatchObject({ total: 7, skus: [{ sku: 'theirs' }] });
  });
});
