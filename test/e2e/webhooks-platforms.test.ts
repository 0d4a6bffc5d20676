/**
 * Every platform end to end over real HTTP: the shared sample, signed as the platform signs it,
 * answered 200, logged, fulfilled by the workflows, one receipt per product with its link.
 */
import { createHash } from 'node:crypto';
import { Customer, Purchase, WebhookDelivery } from '../../src/db/entities';
import { PLATFORMS, type Platform } from '../../src/domain/platforms';
import { listen } from '../helpers/download-links';
import { startHarness, type Harness } from '../helpers/harness';
import {
  edit,
  finalEntry,
  orderBody,
  SAMPLE_ORDER_IDS,
  SAMPLE_SKUS,
  SECRETS,
  seedWebhookOrg,
  send,
  settled,
  withOrderId,
} from '../helpers/webhooks';
import { PLATFORM_FIXTURES, signFor } from '../fixtures/platforms';

let h: Harness;
let baseUrl: string;

beforeAll(async () => {
  h = await startHarness();
  baseUrl = await listen(h);
});
afterAll(() => h?.close());

const PRODUCT_NAMES: Record<string, string> = { 'ebook-pro': 'Ebook Pro', 'course-basic': 'Course Basic' };

describe.each(PLATFORMS.map((p) => [p]))('%s', (platform: Platform) => {
  test('a signed sample is acknowledged, logged, fulfilled and its receipts sent', async () => {
    const org = await seedWebhookOrg(h);
    const res = await send(baseUrl, platform, org.orgId, orderBody(platform, org.orgId));
    expect(res.status).toBe(200);
    expect(res.body.received).toBe(true);
    expect(res.body.deliveryIds).toHaveLength(1);
    const deliveryId = res.body.deliveryIds![0];

    const entry = await finalEntry(h, deliveryId);
    expect(entry.status).toBe('Success');
    expect(entry.platform).toBe(platform);
    expect(entry.externalOrderId).toBe(SAMPLE_ORDER_IDS[platform]);
    expect(entry.test).toBe(false);
    expect(entry.unmatched).toBe(false);
    expect(entry.completedAt!.getTime()).toBeGreaterThanOrEqual(entry.receivedAt.getTime());
    const items = entry.items.getItems();
    expect(items.map((i) => i.sku)).toEqual(SAMPLE_SKUS[platform]);
    expect(items.map((i) => i.outcome)).toEqual(SAMPLE_SKUS[platform].map(() => 'fulfilled'));
    expect(entry.workflowIds).toHaveLength(SAMPLE_SKUS[platform].length);
    for (const id of entry.workflowIds) {
      expect(id).toContain(org.orgId);
      expect(id).not.toMatch(/@|buyer/i);
    }

    const em = h.orm.em.fork();
    const purchases = await em.find(Purchase, { organisation: org.orgId }, { populate: ['customer', 'product'] });
    expect(purchases).toHaveLength(SAMPLE_SKUS[platform].length);
    for (const purchase of purchases) {
      expect(purchase.source).toBe(platform);
      expect(purchase.externalOrderId).toBe(SAMPLE_ORDER_IDS[platform]);
      expect(purchase.amount).toBe(PLATFORM_FIXTURES[platform].skus[purchase.product.slug]);
      expect(purchase.currency).toBe('USD');
      expect(purchase.test).toBe(false);
      expect(purchase.customer.email).toBe('buyer@example.com');
      expect(purchase.receiptStatus).toBe('sent');
      expect(items.find((i) => i.product?.id === purchase.product.id)?.purchase?.id).toBe(purchase.id);
    }
    const customers = await em.find(Customer, { organisation: org.orgId });
    expect(customers).toHaveLength(1);
    expect(customers[0].name).toBe('Sam Buyer');

    await settled(h, deliveryId);
    const receipts = h.mailbox.messages().filter((m) => m.text.includes(org.name));
    expect(receipts.map((m) => m.subject).sort()).toEqual(SAMPLE_SKUS[platform].map((s) => `Your download: ${PRODUCT_NAMES[s]}`).sort());
    for (const mail of receipts) {
      expect(mail.to).toEqual(['buyer@example.com']);
      expect(mail.text).toMatch(/http:\/\/delivery\.test\/d\/[A-Za-z0-9_-]{20,}/);
      expect(mail.html).toContain('href="http://delivery.test/d/');
    }
  });
});

/** How each platform marks a test-mode order (plugin-b has no test flag). */
const TEST_MODE: Array<[Platform, (body: Buffer) => Buffer]> = [
  ['storefront-a', (b) => edit(b, '"test": false', '"test": true')],
  ['payments-c', (b) => edit(b, /"livemode": true/g, '"livemode": false')],
  ['reseller-d', (b) => edit(b, /"live": true/g, '"live": false')],
  ['reseller-d-classic', (b) => edit(b, 'test=false', 'test=true')],
  ['cart-e', (b) => Buffer.concat([b, Buffer.from('&test=true')])],
];

test.each(TEST_MODE)('%s: a test-mode order is fulfilled and marked test on the purchase and the entry', async (platform, toTestMode) => {
  const org = await seedWebhookOrg(h);
  const res = await send(baseUrl, platform, org.orgId, toTestMode(orderBody(platform, org.orgId)));
  expect(res.status).toBe(200);
  const entry = await finalEntry(h, res.body.deliveryIds![0]);
  expect(entry.status).toBe('Success');
  expect(entry.test).toBe(true);
  const purchases = await h.orm.em.fork().find(Purchase, { organisation: org.orgId });
  expect(purchases).toHaveLength(SAMPLE_SKUS[platform].length);
  expect(purchases.every((p) => p.test)).toBe(true);
});

test.each([['storefront-a'], ['plugin-b']] as Array<[Platform]>)('%s: an order id beyond 2^53 is kept digit for digit', async (platform) => {
  const org = await seedWebhookOrg(h);
  const bigId = '820982911946154508';
  const res = await send(baseUrl, platform, org.orgId, withOrderId(platform, orderBody(platform, org.orgId), bigId));
  expect(res.status).toBe(200);
  const entry = await finalEntry(h, res.body.deliveryIds![0]);
  expect(entry.externalOrderId).toBe(bigId);
  expect(entry.workflowIds.every((id) => id.includes(`/${bigId}/`))).toBe(true);
  const purchases = await h.orm.em.fork().find(Purchase, { organisation: org.orgId });
  expect(purchases.map((p) => p.externalOrderId)).toEqual([bigId, bigId]);
});

test('the platforms\' own header names are accepted as aliases', async () => {
  const org = await seedWebhookOrg(h);
  const aliases: Array<[Platform, string, string]> = [
    ['storefront-a', 'x-storefronta-hmac-sha256', 'x-shopify-hmac-sha256'],
    ['plugin-b', 'x-pluginb-webhook-signature', 'x-wc-webhook-signature'],
    ['payments-c', 'paymentsc-signature', 'stripe-signature'],
    ['reseller-d', 'x-rd-signature', 'x-fs-signature'],
  ];
  for (const [platform, spec, alias] of aliases) {
    const body = withOrderId(platform, orderBody(platform, org.orgId), platform === 'storefront-a' || platform === 'plugin-b' ? '777' : `alias-${platform}`);
    const signature = signFor(platform, body, SECRETS[platform]).headers[spec];
    const res = await send(baseUrl, platform, org.orgId, body, { unsigned: true, headers: { [alias]: signature } });
    expect([platform, res.status]).toEqual([platform, 200]);
  }
  const entries = await h.orm.em.fork().count(WebhookDelivery, { organisation: org.orgId });
  expect(entries).toBe(aliases.length);
});

test('reseller-d-classic: the security pair is also read from the form fields', async () => {
  const org = await seedWebhookOrg(h);
  const data = String(Date.now());
  const hash = createHash('md5').update(`${data}test-private-key-reseller-d-classic`).digest('hex');
  const body = Buffer.concat([orderBody('reseller-d-classic', org.orgId), Buffer.from(`&security_data=${data}&security_hash=${hash}`)]);
  const res = await send(baseUrl, 'reseller-d-classic', org.orgId, body, { unsigned: true });
  expect(res.status).toBe(200);
  expect((await finalEntry(h, res.body.deliveryIds![0])).status).toBe('Success');
});
