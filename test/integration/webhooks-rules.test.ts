/**
 * The rules of the front door and of fulfilment (spec Events; decisions §4–§5), each on a real
 * signed delivery through the app, real PostgreSQL, Temporal and SMTP.
 */
import {
  Customer,
  DownloadToken,
  Product,
  Purchase,
  SentEmail,
  UnmatchedSku,
  WebhookDelivery,
  WebhookDeliveryItem,
} from '../../src/db/entities';
import { randomUUID } from 'node:crypto';
import { buildApiApp } from '../../src/roles';
import { deliveryWrite, recordDeliveries } from '../../src/services/delivery-log';
import type { Platform } from '../../src/domain/platforms';
import type { ProductStatus } from '../../src/domain/statuses';
import { startHarness, unreachableStarter, type Harness } from '../helpers/harness';
import { seedOrganisation, seedProduct, seedUser } from '../helpers/seed';
import {
  configureIntegration,
  edit,
  eventually,
  finalEntry,
  orderBody,
  sample,
  SECRETS,
  seedWebhookOrg,
  send,
  settled,
  withEmail,
  withOrderId,
  type WebhookOrg,
} from '../helpers/webhooks';

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h?.close());

const deliver = (platform: Platform, orgId: string, body: Buffer, options?: Parameters<typeof send>[4]) =>
  send(h.app, platform, orgId, body, options);

async function entryOf(deliveryId: string) {
  return h.orm.em.fork().findOneOrFail(WebhookDelivery, deliveryId, { populate: ['items'] });
}

async function counts(orgId: string) {
  const em = h.orm.em.fork();
  return {
    entries: await em.count(WebhookDelivery, { organisation: orgId }),
    purchases: await em.count(Purchase, { organisation: orgId }),
    customers: await em.count(Customer, { organisation: orgId }),
    unmatched: await em.count(UnmatchedSku, { organisation: orgId }),
  };
}

/** An organisation with storefront-a configured and the two products in the given states. */
async function orgWithProducts(
  states: { ebook: ProductStatus | 'no-version'; course: ProductStatus | 'no-version' },
  options: { subscriptionExpires?: string } = {},
) {
  const org = await seedOrganisation(h, options);
  await configureIntegration(h, org.orgId, 'storefront-a');
  const seed = (slug: string, state: ProductStatus | 'no-version') => seedProduct(h, org.orgId, {
    slug, name: slug, status: state === 'no-version' ? 'published' : state, withVersion: state !== 'no-version',
  });
  const ebook = await seed('ebook-pro', states.ebook);
  const course = await seed('course-basic', states.course);
  return { ...org, ebook, course };
}

const storefront = (orgId: string, orderId?: string) => orderBody('storefront-a', orgId, orderId);

describe('held lines create nothing, are answered 200 and logged with their reason', () => {
  test.each([
    ['draft', { ebook: 'draft', course: 'draft' }, 'product is draft'],
    ['archived', { ebook: 'archived', course: 'archived' }, 'product is archived'],
    ['no live version', { ebook: 'no-version', course: 'no-version' }, 'product has no live version'],
  ] as const)('%s', async (_name, states, reason) => {
    const org = await orgWithProducts(states);
    const res = await deliver('storefront-a', org.orgId, storefront(org.orgId));
    expect(res.status).toBe(200);
    expect(res.body.deliveryIds).toHaveLength(1);

    // Final at once: no workflow was started for it.
    const entry = await entryOf(res.body.deliveryIds![0]);
    expect(entry.status).toBe('held');
    expect(entry.completedAt).not.toBeNull();
    expect(entry.workflowIds).toEqual([]);
    expect(entry.items.getItems().map((i) => [i.sku, i.outcome, i.reason])).toEqual([
      ['ebook-pro', 'held', reason],
      ['course-basic', 'held', reason],
    ]);
    expect(await counts(org.orgId)).toEqual({ entries: 1, purchases: 0, customers: 0, unmatched: 0 });
  });

  test('an unpaid order holds every line with reason "not paid"', async () => {
    const org = await orgWithProducts({ ebook: 'published', course: 'published' });
    const body = edit(storefront(org.orgId), '"financial_status": "paid"', '"financial_status": "pending"');
    const res = await deliver('storefront-a', org.orgId, body);
    expect(res.status).toBe(200);
    const entry = await entryOf(res.body.deliveryIds![0]);
    expect(entry.status).toBe('held');
    expect(entry.items.getItems().map((i) => [i.outcome, i.reason])).toEqual([['held', 'not paid'], ['held', 'not paid']]);
    expect(await counts(org.orgId)).toMatchObject({ purchases: 0, customers: 0 });
  });

  test('an organisation whose subscription expired has every line held, so no sale is lost', async () => {
    const org = await orgWithProducts({ ebook: 'published', course: 'published' }, { subscriptionExpires: '2020-01-31' });
    const res = await deliver('storefront-a', org.orgId, storefront(org.orgId));
    expect(res.status).toBe(200);
    const entry = await entryOf(res.body.deliveryIds![0]);
    expect(entry.status).toBe('held');
    expect(entry.items.getItems().map((i) => [i.outcome, i.reason])).toEqual([
      ['held', 'subscription expired'], ['held', 'subscription expired'],
    ]);
    expect(await counts(org.orgId)).toMatchObject({ purchases: 0, customers: 0 });
  });

  test('after publishing, a redelivery of the held order fulfils it', async () => {
    const org = await orgWithProducts({ ebook: 'draft', course: 'draft' });
    const first = await deliver('storefront-a', org.orgId, storefront(org.orgId));
    expect((await entryOf(first.body.deliveryIds![0])).status).toBe('held');

    const em = h.orm.em.fork();
    await em.nativeUpdate(Product, { organisation: org.orgId }, { status: 'published' });
    const again = await deliver('storefront-a', org.orgId, storefront(org.orgId));
    const entry = await finalEntry(h, again.body.deliveryIds![0]);
    expect(entry.status).toBe('Success');
    expect(entry.items.getItems().map((i) => i.outcome)).toEqual(['fulfilled', 'fulfilled']);
    expect(await counts(org.orgId)).toMatchObject({ purchases: 2, customers: 1 });
  });
});

test('deliveries to several organisations that arrive together each read their own organisation, secrets and products', async () => {
  // The front door reads concurrent deliveries' organisations in one statement: each must get its own
  // answer, an unknown organisation's and one without the integration among them.
  const live = await orgWithProducts({ ebook: 'published', course: 'published' });
  const drafts = await orgWithProducts({ ebook: 'draft', course: 'draft' });
  const bare = await seedOrganisation(h);
  await seedProduct(h, bare.orgId, { slug: 'ebook-pro' });
  const unknown = randomUUID();
  const targets = [live.orgId, drafts.orgId, bare.orgId, unknown];
  const sends = Array.from({ length: 8 }, (_, i) => targets.map((orgId) => deliver('storefront-a', orgId, storefront(orgId, String(7000 + i))))).flat();
  const answers = await Promise.all(sends);
  expect(answers.map((a) => a.status)).toEqual(Array.from({ length: 8 }, () => [200, 200, 401, 404]).flat());

  const entries = await h.orm.em.fork().find(WebhookDelivery, { organisation: { $in: [live.orgId, drafts.orgId] } }, { populate: ['items'] });
  const lines = (orgId: string) => entries.filter((e) => e.organisation.id === orgId).flatMap((e) => e.items.getItems().map((i) => [i.product?.id, i.outcome === 'held' ? i.reason : 'to fulfil']));
  expect(lines(drafts.orgId)).toEqual(Array.from({ length: 8 }, () => [[drafts.ebook.productId, 'product is draft'], [drafts.course.productId, 'product is draft']]).flat());
  expect(lines(live.orgId)).toEqual(Array.from({ length: 8 }, () => [[live.ebook.productId, 'to fulfil'], [live.course.productId, 'to fulfil']]).flat());
  expect(await counts(bare.orgId)).toEqual({ entries: 0, purchases: 0, customers: 0, unmatched: 0 });
  await Promise.all(entries.map((e) => settled(h, e.id)));
});

test('a mixed order (one line held, one fulfilled) is Success and fulfils the live line only', async () => {
  const org = await orgWithProducts({ ebook: 'published', course: 'draft' });
  const res = await deliver('storefront-a', org.orgId, storefront(org.orgId));
  expect(res.status).toBe(200);
  const entry = await finalEntry(h, res.body.deliveryIds![0]);
  expect(entry.status).toBe('Success');
  expect(entry.items.getItems().map((i) => [i.sku, i.outcome, i.reason])).toEqual([
    ['ebook-pro', 'fulfilled', null],
    ['course-basic', 'held', 'product is draft'],
  ]);
  const purchases = await h.orm.em.fork().find(Purchase, { organisation: org.orgId });
  expect(purchases.map((p) => p.product.id)).toEqual([org.ebook.productId]);
});

describe('unknown SKUs', () => {
  let org: WebhookOrg & { name: string };
  let admin: { email: string };
  let member: { email: string };
  beforeAll(async () => {
    org = await seedWebhookOrg(h);
    admin = await seedUser(h, org.orgId, 'admin');
    member = await seedUser(h, org.orgId, 'member');
  });

  test('a line with an unknown SKU is flagged and counted; the other line is fulfilled', async () => {
    const body = edit(storefront(org.orgId, '1001'), '"sku": "course-basic"', '"sku": "Mystery-SKU"');
    const res = await deliver('storefront-a', org.orgId, body);
    const entry = await finalEntry(h, res.body.deliveryIds![0]);
    expect(entry.status).toBe('Success');
    expect(entry.unmatched).toBe(true);
    expect(entry.items.getItems().map((i) => [i.sku, i.outcome, i.reason])).toEqual([
      ['ebook-pro', 'fulfilled', null],
      ['Mystery-SKU', 'unmatched', 'unknown SKU'],
    ]);
    const counter = await h.orm.em.fork().findOneOrFail(UnmatchedSku, { organisation: org.orgId, sku: 'Mystery-SKU' });
    expect([counter.platform, counter.count]).toEqual(['storefront-a', 1]);

    // One count per unmatched item of each entry, so a redelivery counts again.
    const again = await deliver('storefront-a', org.orgId, body);
    expect((await finalEntry(h, again.body.deliveryIds![0])).items.getItems().map((i) => i.outcome)).toEqual(['duplicate', 'unmatched']);
    const recounted = await h.orm.em.fork().findOneOrFail(UnmatchedSku, { organisation: org.orgId, sku: 'Mystery-SKU' });
    expect(recounted.count).toBe(2);
    expect(recounted.lastSeenAt.getTime()).toBeGreaterThanOrEqual(counter.lastSeenAt.getTime());
  });

  test('SKUs match case-insensitively after trimming, extra SKUs included', async () => {
    const extra = await seedProduct(h, org.orgId, { slug: 'bundle-x', skus: ['LEGACY-123'] });
    const body = edit(edit(storefront(org.orgId, '1002'), '"sku": "course-basic"', '"sku": " legacy-123 "'), '"sku": "ebook-pro"', '"sku": "EBOOK-PRO"');
    const res = await deliver('storefront-a', org.orgId, body);
    const entry = await finalEntry(h, res.body.deliveryIds![0]);
    expect(entry.items.getItems().map((i) => [i.product?.id, i.outcome])).toEqual([
      [org.ebook.productId, 'fulfilled'],
      [extra.productId, 'fulfilled'],
    ]);
  });

  test('deliveries that arrive together are all recorded, and each unmatched line counts once', async () => {
    const crowd = Array.from({ length: 40 }, (_, i) => edit(storefront(org.orgId, String(5000 + i)), '"sku": "course-basic"', '"sku": "Crowd-SKU"'));
    const answers = await Promise.all(crowd.map((body) => deliver('storefront-a', org.orgId, body)));
    expect(answers.map((a) => a.status)).toEqual(crowd.map(() => 200));
    const ids = answers.map((a) => a.body.deliveryIds![0]);
    expect(await h.orm.em.fork().count(WebhookDelivery, { id: { $in: ids } })).toBe(40);
    const counter = await h.orm.em.fork().findOneOrFail(UnmatchedSku, { organisation: org.orgId, sku: 'Crowd-SKU' });
    expect(counter.count).toBe(40);
    await Promise.all(ids.map((id) => settled(h, id)));
  });

  test('one statement records several requests\' deliveries, their counters of the same SKU added together', async () => {
    const entry = (orderId: string) => ({
      id: randomUUID(), kind: 'order' as const, platform: 'storefront-a' as const, externalOrderId: orderId, eventId: null, test: false, workflowIds: [],
      items: [{ id: randomUUID(), sku: 'Shared-SKU', productId: null, outcome: 'unmatched' as const, reason: 'unknown SKU', workflowId: null }],
    });
    const now = new Date();
    const writes = ['batch-1', 'batch-2', 'batch-3'].map((orderId) => deliveryWrite(org.orgId, [entry(orderId)], [], now));
    await recordDeliveries(h.orm.em.fork(), writes);
    const counter = await h.orm.em.fork().findOneOrFail(UnmatchedSku, { organisation: org.orgId, sku: 'Shared-SKU' });
    expect(counter.count).toBe(3);
    expect(await h.orm.em.fork().count(WebhookDelivery, { organisation: org.orgId, externalOrderId: { $in: ['batch-1', 'batch-2', 'batch-3'] } })).toBe(3);
  });

  test('a line without any SKU is unmatched with reason "no SKU"', async () => {
    const body = edit(storefront(org.orgId, '1003'), '"sku": "course-basic"', '"sku": ""');
    const res = await deliver('storefront-a', org.orgId, body);
    const entry = await finalEntry(h, res.body.deliveryIds![0]);
    expect(entry.items.getItems().map((i) => [i.sku, i.outcome, i.reason])[1]).toEqual([null, 'unmatched', 'no SKU']);
    const counter = await h.orm.em.fork().findOneOrFail(UnmatchedSku, { organisation: org.orgId, sku: '' });
    expect(counter.count).toBe(1);
  });

  test('an order whose every SKU is unknown is Error at once, alerts owners and admins once, however often it comes', async () => {
    const body = edit(edit(storefront(org.orgId, '1004'), '"sku": "course-basic"', '"sku": "nope-2"'), '"sku": "ebook-pro"', '"sku": "nope-1"');
    const first = await deliver('storefront-a', org.orgId, body);
    expect(first.status).toBe(200);
    const entry = await entryOf(first.body.deliveryIds![0]);
    expect(entry.status).toBe('Error');
    expect(entry.unmatched).toBe(true);
    expect(entry.completedAt).not.toBeNull();
    expect(entry.workflowIds).toEqual([`alert/${org.orgId}/storefront-a/1004`]);

    const alert = await h.mailbox.waitFor((m) => m.subject.includes('Order 1004 from storefront-a'), 20_000);
    expect(alert.to).toHaveLength(2);
    expect(alert.to).toContain(admin.email);
    expect(alert.to.filter((a) => a.startsWith('owner-'))).toHaveLength(1);
    expect(alert.to).not.toContain(member.email);
    expect(alert.text).toContain('SKU nope-1: unknown SKU');
    expect(alert.text).toContain('SKU nope-2: unknown SKU');

    const second = await deliver('storefront-a', org.orgId, body);
    expect((await entryOf(second.body.deliveryIds![0])).status).toBe('Error');
    await settled(h, second.body.deliveryIds![0]);
    expect(h.mailbox.messages().filter((m) => m.subject.includes('Order 1004 from storefront-a'))).toHaveLength(1);
    expect(await h.orm.em.fork().count(SentEmail, { kind: 'alert', businessKey: `alert:${org.orgId}:storefront-a:1004` })).toBe(1);
  });

  test('an order without a customer email fails at once with a reason and alerts', async () => {
    const body = edit(edit(storefront(org.orgId, '1005'), /"email": "buyer@example.com"/g, '"email": null'), /"contact_email": "buyer@example.com"/, '"contact_email": null');
    const res = await deliver('storefront-a', org.orgId, body);
    const entry = await entryOf(res.body.deliveryIds![0]);
    expect(entry.status).toBe('Error');
    expect(entry.items.getItems().map((i) => [i.outcome, i.reason])).toEqual([
      ['error', 'order has no customer email'], ['error', 'order has no customer email'],
    ]);
    await h.mailbox.waitFor((m) => m.subject.includes('Order 1005 from storefront-a'), 20_000);
    expect(await h.orm.em.fork().count(Purchase, { organisation: org.orgId, externalOrderId: '1005' })).toBe(0);
  });
});

test('a redelivery after success is a duplicate: no second purchase, token or receipt', async () => {
  const org = await seedWebhookOrg(h);
  const body = orderBody('cart-e', org.orgId);
  const first = await deliver('cart-e', org.orgId, body);
  await finalEntry(h, first.body.deliveryIds![0]);
  await settled(h, first.body.deliveryIds![0]);
  const second = await deliver('cart-e', org.orgId, body);
  const entry = await finalEntry(h, second.body.deliveryIds![0]);
  expect(entry.status).toBe('Success');
  expect(entry.items.getItems().map((i) => i.outcome)).toEqual(['duplicate']);
  await settled(h, second.body.deliveryIds![0]);

  const em = h.orm.em.fork();
  const purchases = await em.find(Purchase, { organisation: org.orgId });
  expect(purchases).toHaveLength(1);
  expect(entry.items[0].purchase?.id).toBe(purchases[0].id);
  expect(await em.count(DownloadToken, { purchase: purchases[0].id })).toBe(1);
  expect(h.mailbox.messages().filter((m) => m.text.includes(org.name))).toHaveLength(1);
});

test('an order recorded by hand is a duplicate when the platform delivers it', async () => {
  const org = await seedWebhookOrg(h);
  const res = await h.app.inject({
    method: 'POST',
    url: '/api/purchases',
    headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({
      customerId: 'new', 'newCustomer.email': 'buyer@example.com', productId: org.ebook.productId, amount: '29',
      currency: 'USD', sendEmail: 'false', source: 'cart-e', externalOrderId: 'Xk9pQ2rT5vW8yZ1bC4dF6g==',
    }).toString(),
  });
  expect(res.statusCode).toBe(201);
  const delivery = await deliver('cart-e', org.orgId, orderBody('cart-e', org.orgId));
  const entry = await finalEntry(h, delivery.body.deliveryIds![0]);
  expect(entry.items.getItems().map((i) => i.outcome)).toEqual(['duplicate']);
  expect(await h.orm.em.fork().count(Purchase, { organisation: org.orgId })).toBe(1);
});

describe('refused deliveries record nothing', () => {
  let org: WebhookOrg;
  beforeAll(async () => {
    org = await seedWebhookOrg(h);
  });

  const cases: Array<[string, Platform, () => Parameters<typeof send>[4]]> = [
    ['storefront-a: bad signature', 'storefront-a', () => ({ headers: { 'x-storefronta-hmac-sha256': 'AAAA' } })],
    ['storefront-a: signed with another secret', 'storefront-a', () => ({ secrets: { secret: 'not-the-secret' } })],
    ['storefront-a: missing header', 'storefront-a', () => ({ unsigned: true })],
    ['plugin-b: missing header', 'plugin-b', () => ({ unsigned: true })],
    ['payments-c: stale timestamp (301 s)', 'payments-c', () => ({ nowSeconds: Math.floor(Date.now() / 1000) - 301 })],
    ['payments-c: missing header', 'payments-c', () => ({ unsigned: true })],
    ['reseller-d: bad signature', 'reseller-d', () => ({ secrets: { secret: 'wrong' } })],
    ['reseller-d-classic: wrong private key', 'reseller-d-classic', () => ({ secrets: { privateKey: 'wrong' } })],
    ['reseller-d-classic: missing pair', 'reseller-d-classic', () => ({ unsigned: true })],
    ['cart-e: wrong secret in the URL', 'cart-e', () => ({ secrets: { secret: 'wrong' } })],
    ['cart-e: no secret', 'cart-e', () => ({ unsigned: true })],
  ];

  test.each(cases)('%s → 401', async (_name, platform, options) => {
    const before = await counts(org.orgId);
    const res = await deliver(platform, org.orgId, orderBody(platform, org.orgId), options());
    expect(res.status).toBe(401);
    expect(typeof res.body.error).toBe('string');
    expect(await counts(org.orgId)).toEqual(before);
  });

  test('an integration that is not configured → 401', async () => {
    const bare = await seedOrganisation(h);
    await seedProduct(h, bare.orgId, { slug: 'ebook-pro' });
    for (const platform of ['storefront-a', 'payments-c', 'cart-e'] as Platform[]) {
      const res = await deliver(platform, bare.orgId, orderBody(platform, bare.orgId));
      expect([platform, res.status, res.body.error]).toEqual([platform, 401, `the ${platform} integration is not configured`]);
    }
    expect(await counts(bare.orgId)).toEqual({ entries: 0, purchases: 0, customers: 0, unmatched: 0 });
  });

  test('unknown or malformed organisation → 404', async () => {
    const unknown = await deliver('storefront-a', '00000000-0000-4000-8000-000000000000', sample('storefront-a'));
    expect([unknown.status, unknown.body.error]).toEqual([404, 'organisation not found']);
    const malformed = await deliver('storefront-a', 'not-a-uuid', sample('storefront-a'));
    expect(malformed.status).toBe(404);
    // payments-c naming no organisation at all (no metadata.org_id, no known account).
    const nobody = await deliver('payments-c', '', sample('payments-c'));
    expect(nobody.status).toBe(404);
  });

  test('payments-c: another organisation\'s secret cannot pass for this one', async () => {
    const other = await seedOrganisation(h);
    await configureIntegration(h, other.orgId, 'payments-c', { secret: 'whsec_other' });
    const before = await counts(other.orgId);
    const res = await deliver('payments-c', other.orgId, orderBody('payments-c', other.orgId));
    expect(res.status).toBe(401);
    expect(await counts(other.orgId)).toEqual(before);
  });

  test('garbage after a good signature → 400', async () => {
    const garbage: Array<[Platform, string]> = [
      ['storefront-a', 'this is not json'],
      ['storefront-a', '{"id": 1, "line_items": "nope"}'],
      ['plugin-b', '[1,2,3]'],
      ['payments-c', `{"type": "checkout.session.completed", "data": {"object": {"metadata": {"org_id": "${org.orgId}"}}}}`],
      ['reseller-d', '{"events": {"not": "an array"}}'],
      ['reseller-d-classic', 'fname=Sam&lname=Buyer'],
      ['cart-e', 'email=a%40b.example&price=100'],
    ];
    const before = await counts(org.orgId);
    for (const [platform, text] of garbage) {
      const res = await deliver(platform, org.orgId, Buffer.from(text));
      expect([platform, text, res.status]).toEqual([platform, text, 400]);
    }
    expect(await counts(org.orgId)).toEqual(before);
  });

  test('plugin-b\'s unsigned activation ping → 200, nothing recorded', async () => {
    const before = await counts(org.orgId);
    const res = await deliver('plugin-b', org.orgId, Buffer.from('webhook_id=42'), { unsigned: true, contentType: 'application/x-www-form-urlencoded' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: true, deliveryIds: [] });
    expect(await counts(org.orgId)).toEqual(before);
  });

  test('understood events that carry no order → 200, nothing recorded', async () => {
    const before = await counts(org.orgId);
    // A refund ping is an event since decisions §9 (test/e2e/refunds-platforms); a cancellation is not.
    const cancellation = edit(orderBody('cart-e', org.orgId), 'resource_name=sale', 'resource_name=cancellation');
    const otherEvent = edit(orderBody('payments-c', org.orgId), '"type": "checkout.session.completed"', '"type": "checkout.session.expired"');
    for (const [platform, body] of [['cart-e', cancellation], ['payments-c', otherEvent]] as Array<[Platform, Buffer]>) {
      const res = await deliver(platform, org.orgId, body);
      expect([platform, res.status, res.body]).toEqual([platform, 200, { received: true, deliveryIds: [] }]);
    }
    expect(await counts(org.orgId)).toEqual(before);
  });
});

test('payments-c finds the organisation by the account registered on its integration', async () => {
  const org = await seedWebhookOrg(h, { platforms: ['storefront-a'] });
  await configureIntegration(h, org.orgId, 'payments-c', { ...SECRETS['payments-c'], accountId: 'acct_1ExampleAccount' });
  const body = edit(sample('payments-c'), '"object": "event",', '"object": "event",\n  "account": "acct_1ExampleAccount",');
  const res = await deliver('payments-c', '', body);
  expect(res.status).toBe(200);
  const entry = await finalEntry(h, res.body.deliveryIds![0]);
  expect(entry.status).toBe('Success');
  expect((await h.orm.em.fork().findOneOrFail(WebhookDelivery, entry.id, { populate: ['organisation'] })).organisation.id).toBe(org.orgId);
});

test('reseller-d: one log entry per order.completed event of a batch', async () => {
  const org = await seedWebhookOrg(h);
  const one = sample('reseller-d').toString('utf8');
  const events = JSON.parse(one).events as unknown[];
  const second = JSON.stringify(events[0]).replace(/nZ3xQ7rLTy2kP9vBcW4mHg/g, 'second-order');
  const batch = Buffer.from(`{"events":[${JSON.stringify(events[0])},${second},{"id":"x","type":"subscription.activated","data":{}}]}`);
  const res = await deliver('reseller-d', org.orgId, batch);
  expect(res.status).toBe(200);
  expect(res.body.deliveryIds).toHaveLength(2);
  const entries = await Promise.all(res.body.deliveryIds!.map((id) => finalEntry(h, id)));
  expect(entries.map((e) => [e.externalOrderId, e.status])).toEqual([['nZ3xQ7rLTy2kP9vBcW4mHg', 'Success'], ['second-order', 'Success']]);
  expect(await h.orm.em.fork().count(Purchase, { organisation: org.orgId })).toBe(4);
});

test('customers are found by email case-insensitively across platforms', async () => {
  const org = await seedWebhookOrg(h);
  await deliver('cart-e', org.orgId, withOrderId('cart-e', withEmail('cart-e', orderBody('cart-e', org.orgId), 'Repeat@Example.com'), 'sale-1'));
  const res = await deliver('storefront-a', org.orgId, withEmail('storefront-a', storefront(org.orgId), 'repeat@example.com'));
  await finalEntry(h, res.body.deliveryIds![0]);
  const customers = await h.orm.em.fork().find(Customer, { organisation: org.orgId });
  expect(customers.map((c) => c.email)).toEqual(['repeat@example.com']);
});

test('Temporal out of reach in the receiving process → 200 at once, Pending, and fulfilled by a process that reaches it', async () => {
  const org = await seedWebhookOrg(h);
  const unreachable = unreachableStarter(h.config);
  const app = await buildApiApp({ config: h.config, orm: h.orm, starter: unreachable, storage: h.storage, clock: () => new Date() });
  await app.ready();
  let res: Awaited<ReturnType<typeof send>>;
  try {
    const started = Date.now();
    res = await send(app, 'cart-e', org.orgId, orderBody('cart-e', org.orgId));
    expect(res.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(1_000);
    const [entry] = await h.orm.em.fork().find(WebhookDelivery, { organisation: org.orgId }, { populate: ['items'] });
    expect(entry.status).toBe('Pending');
  } finally {
    // That process goes away; its row waits in the outbox.
    await app.close();
  }
  // The harness's app stands for another API process: its dispatcher claims the row.
  expect((await finalEntry(h, res.body.deliveryIds![0])).items.getItems().map((i) => i.outcome)).toEqual(['fulfilled']);
  expect(await h.orm.em.fork().count(Purchase, { organisation: org.orgId })).toBe(1);
});

test('a body over 1 MiB → 413, nothing recorded', async () => {
  const org = await seedWebhookOrg(h);
  const big = Buffer.concat([orderBody('cart-e', org.orgId), Buffer.from(`&pad=${'x'.repeat(1024 * 1024)}`)]);
  const res = await deliver('cart-e', org.orgId, big);
  expect(res.status).toBe(413);
  expect(await counts(org.orgId)).toMatchObject({ entries: 0 });
});

test('every delivery item names its workflow and the workflow is findable by its search attributes', async () => {
  const org = await seedWebhookOrg(h);
  const res = await deliver('storefront-a', org.orgId, storefront(org.orgId, '4242'));
  const entry = await finalEntry(h, res.body.deliveryIds![0]);
  const items = await h.orm.em.fork().find(WebhookDeliveryItem, { delivery: entry.id }, { orderBy: { lineIndex: 'asc' } });
  expect(items.map((i) => i.workflowId)).toEqual([
    `fulfil/${org.orgId}/storefront-a/4242/${org.ebook.productId}`,
    `fulfil/${org.orgId}/storefront-a/4242/${org.course.productId}`,
  ]);
  const found = await eventually(async () => {
    const ids: string[] = [];
    for await (const run of h.temporal.workflow.list({ query: `OrgId = "${org.orgId}" AND Platform = "storefront-a" AND OrderId = "4242"` })) ids.push(run.workflowId);
    return ids.length === 2 ? ids.sort() : undefined;
  }, 20_000, 'the runs to be visible');
  expect(found).toEqual([...entry.workflowIds].sort());
});
