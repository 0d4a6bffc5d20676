/**
 * License keys issued with purchases (decisions §14): one key per purchase whatever the duplicate
 * deliveries, never one key for two purchases, and a sale that finds its product's pool empty is
 * recorded and waits, durably, until an upload releases it, in purchase order.
 */
import { Client as PgClient } from 'pg';
import { LicenseKey, Purchase, WebhookDelivery, WebhookDeliveryItem } from '../../src/db/entities';
import { GENERATED_KEY_RE, WAITING_FOR_KEY_REASON } from '../../src/domain/license-keys';
import { seedPurchase } from '../helpers/download-links';
import { startHarness, type Harness } from '../helpers/harness';
import { seedUser } from '../helpers/seed';
import { eventually, finalEntry, orderBody, seedWebhookOrg, send, type WebhookOrg } from '../helpers/webhooks';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h?.close());

const bearer = (apiKey: string) => ({ authorization: `Bearer ${apiKey}` });

async function setLicenseKeys(org: WebhookOrg, productId: string, licenseKeys: unknown): Promise<void> {
  const res = await h.app.inject({ method: 'PUT', url: `/api/products/${productId}`, headers: bearer(org.apiKey), payload: { licenseKeys } });
  expect([res.statusCode, res.json().licenseKeys]).toEqual([200, licenseKeys]);
}

function upload(apiKey: string, productId: string, text: string) {
  return h.app.inject({
    method: 'POST', url: `/api/products/${productId}/license-keys`,
    headers: { ...bearer(apiKey), 'content-type': 'text/plain; charset=utf-8' }, payload: text,
  });
}

/** `count` cart-e orders (one product each) sent at once, ten requests in flight at a time. */
async function sendOrders(org: WebhookOrg, prefix: string, count: number): Promise<string[]> {
  const deliveryIds: string[] = new Array<string>(count);
  let next = 0;
  await Promise.all(Array.from({ length: 10 }, async () => {
    for (let i = next++; i < count; i = next++) {
      const res = await send(h.app, 'cart-e', org.orgId, orderBody('cart-e', org.orgId, `${prefix}-${i}`));
      expect(res.status).toBe(200);
      deliveryIds[i] = res.body.deliveryIds![0];
    }
  }));
  return deliveryIds;
}

test('50 concurrent deliveries of one order of a generated-key product: one purchase, one key', async () => {
  const org = await seedWebhookOrg(h, { platforms: ['cart-e'] });
  await setLicenseKeys(org, org.ebook.productId, { source: 'generated', activationLimit: 3 });
  const body = orderBody('cart-e', org.orgId, 'generated-order-1');
  const responses = await Promise.all(Array.from({ length: 50 }, () => send(h.app, 'cart-e', org.orgId, body)));
  expect(new Set(responses.map((r) => r.status))).toEqual(new Set([200]));
  const entries = await Promise.all(responses.map((r) => finalEntry(h, r.body.deliveryIds![0], 120_000)));
  expect(new Set(entries.map((e) => e.status))).toEqual(new Set(['Success']));

  const em = h.orm.em.fork();
  const purchases = await em.find(Purchase, { organisation: org.orgId });
  const keys = await em.find(LicenseKey, { organisation: org.orgId });
  expect(purchases).toHaveLength(1);
  expect(purchases[0].licenseWanted).toBe(true);
  expect(keys.map((k) => k.purchase?.id)).toEqual([purchases[0].id]);
  expect(keys[0].key).toMatch(GENERATED_KEY_RE);
}, 180_000);

test('200 orders race for a pool of 150 keys: 150 distinct keys, 50 receipts wait; 50 uploaded keys release exactly those, in purchase order', async () => {
  const org = await seedWebhookOrg(h, { platforms: ['cart-e'] });
  await setLicenseKeys(org, org.ebook.productId, { source: 'pool', activationLimit: null });
  const pool = Array.from({ length: 150 }, (_, i) => `POOL-${String(i).padStart(4, '0')}`);
  expect((await upload(org.apiKey, org.ebook.productId, pool.join('\n'))).json()).toEqual({ added: 150, duplicates: 0 });

  const deliveryIds = await sendOrders(org, 'pool-order', 200);
  const em = () => h.orm.em.fork();
  const waitingItems = () => em().count(WebhookDeliveryItem, { delivery: { organisation: org.orgId }, outcome: null, reason: WAITING_FOR_KEY_REASON });
  await eventually(async () => ((await waitingItems()) === 50 ? true : undefined), 180_000, '50 items waiting for a key');
  await eventually(async () => ((await em().count(WebhookDelivery, { organisation: org.orgId, status: 'Success' })) === 150 ? true : undefined),
    60_000, '150 entries fulfilled');

  const issued = await em().find(LicenseKey, { product: org.ebook.productId, purchase: { $ne: null } });
  expect(issued).toHaveLength(150);
  expect(new Set(issued.map((k) => k.purchase!.id)).size).toBe(150);
  expect(new Set(issued.map((k) => k.key))).toEqual(new Set(pool));
  const purchases = await em().find(Purchase, { organisation: org.orgId }, { orderBy: { createdAt: 'asc', id: 'asc' } });
  expect(purchases).toHaveLength(200);
  const withKey = new Set(issued.map((k) => k.purchase!.id));
  const waiting = purchases.filter((p) => !withKey.has(p.id));
  expect(waiting).toHaveLength(50);
  expect(await em().count(WebhookDelivery, { organisation: org.orgId, status: 'Pending' })).toBe(50);
  expect((await h.app.inject({ url: `/api/products/${org.ebook.productId}/license-keys`, headers: bearer(org.apiKey) })).json())
    .toEqual({ available: 0, issued: 150 });

  // The staff heard once that the pool ran low and once that it ran dry, however many sales found it so.
  const alerts = () => h.mailbox.messages().filter((m) => m.subject.startsWith('License keys') && m.text.includes(org.name));
  await eventually(async () => (alerts().length === 2 ? true : undefined), 30_000, 'the two pool alerts');
  expect(alerts().map((m) => m.subject).sort()).toEqual(['License keys ran out: Ebook Pro', 'License keys running low: Ebook Pro']);

  const fresh = Array.from({ length: 50 }, (_, i) => `NEW-${String(i).padStart(4, '0')}`);
  expect((await upload(org.apiKey, org.ebook.productId, `${fresh.join('\r\n')}\n\nPOOL-0000\n`)).json()).toEqual({ added: 50, duplicates: 1 });
  // Issued in the upload's own transaction: the oldest waiting purchase has the oldest new key.
  const released = await em().find(LicenseKey, { key: { $in: fresh } });
  const keyOf = new Map(released.map((k) => [k.purchase?.id, k.key]));
  expect(waiting.map((p) => keyOf.get(p.id))).toEqual(fresh);

  const entries = await Promise.all(deliveryIds.map((id) => finalEntry(h, id, 120_000)));
  expect(new Set(entries.map((e) => e.status))).toEqual(new Set(['Success']));
  expect(await em().count(WebhookDeliveryItem, { delivery: { organisation: org.orgId }, outcome: 'fulfilled' })).toBe(200);
  const receipts = () => h.mailbox.messages().filter((m) => m.subject === 'Your download: Ebook Pro' && m.text.includes(org.name));
  await eventually(async () => (receipts().length === 200 ? true : undefined), 60_000, () => `200 receipts (${receipts().length} arrived)`);
}, 600_000);

test('a sale waiting for a key that is revoked ends withdrawn, and the next upload skips it', async () => {
  const org = await seedWebhookOrg(h, { platforms: ['cart-e'] });
  await setLicenseKeys(org, org.ebook.productId, { source: 'pool', activationLimit: 1 });
  const [deliveryId] = await sendOrders(org, 'revoked-while-waiting', 1);
  const item = await eventually(async () => (await h.orm.em.fork().findOne(WebhookDeliveryItem, { delivery: deliveryId, reason: WAITING_FOR_KEY_REASON })) ?? undefined,
    60_000, 'the item to wait for a key');
  const purchase = await h.orm.em.fork().findOneOrFail(Purchase, { organisation: org.orgId });
  expect(item.outcome).toBeNull();

  const revoked = await h.app.inject({ method: 'POST', url: `/api/purchases/${purchase.id}/revoke`, headers: bearer(org.apiKey) });
  expect(revoked.statusCode).toBe(200);
  const entry = await finalEntry(h, deliveryId, 60_000);
  expect(entry.items.getItems().map((i) => i.outcome)).toEqual(['revoked']);

  expect((await upload(org.apiKey, org.ebook.productId, 'AFTER-REVOKE-1')).json()).toEqual({ added: 1, duplicates: 0 });
  expect(await h.orm.em.fork().count(LicenseKey, { purchase: purchase.id })).toBe(0);
}, 120_000);

test('an upload never takes a free key that a sale being recorded has just claimed', async () => {
  const org = await seedWebhookOrg(h, { platforms: ['cart-e'] });
  await setLicenseKeys(org, org.ebook.productId, { source: 'pool', activationLimit: null });
  const [waitingDelivery] = await sendOrders(org, 'claimed-meanwhile', 1);
  await eventually(async () => (await h.orm.em.fork().findOne(WebhookDeliveryItem, { delivery: waitingDelivery, reason: WAITING_FOR_KEY_REASON })) ?? undefined,
    60_000, 'the sale to wait for a key');
  const waiting = await h.orm.em.fork().findOneOrFail(Purchase, { organisation: org.orgId, product: org.ebook.productId });
  // A free key while that sale waits (as after a waiting sale is revoked, an upload skips it, and the
  // sale is restored), and another purchase to stand for a sale being recorded.
  await h.orm.em.fork().execute(`insert into license_key (id, organisation_id, product_id, key, purchase_id, issued_at, created_at)
    values (gen_random_uuid(), ?, ?, 'CLAIMED-MEANWHILE', null, null, now())`, [org.orgId, org.ebook.productId]);
  const other = await seedPurchase(h, org.orgId, org.course);

  // The statement that records a sale takes its key `for update skip locked` and holds it until commit.
  const sale = new PgClient({ connectionString: h.config.databaseUrl });
  await sale.connect();
  try {
    await sale.query('begin');
    await sale.query(`update license_key set purchase_id = $1, issued_at = now() where key = 'CLAIMED-MEANWHILE'`, [other.purchaseId]);
    const uploaded = upload(org.apiKey, org.ebook.productId, 'UPLOADED-MEANWHILE');
    // Commit once the upload has answered, or is waiting for the sale's lock.
    const blocked = eventually(async () => ((await sale.query(`select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`)).rowCount
      ? true : undefined), 10_000, 'the upload to wait for the lock');
    await Promise.race([uploaded, blocked]);
    await sale.query('commit');
    expect((await uploaded).json()).toEqual({ added: 1, duplicates: 0 });
  } finally {
    await sale.end();
  }
  const keyOf = async (key: string) => (await h.orm.em.fork().findOneOrFail(LicenseKey, { key })).purchase?.id;
  expect([await keyOf('CLAIMED-MEANWHILE'), await keyOf('UPLOADED-MEANWHILE')]).toEqual([other.purchaseId, waiting.id]);
}, 120_000);

test('a sale entered by API for an empty pool is answered at once; its receipt goes when a key is uploaded', async () => {
  const org = await seedWebhookOrg(h, { platforms: ['cart-e'] });
  await setLicenseKeys(org, org.ebook.productId, { source: 'pool', activationLimit: null });
  const email = `waits-${org.orgId}@example.com`;
  const res = await h.app.inject({
    method: 'POST', url: '/api/purchases', headers: { ...bearer(org.apiKey), 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({
      customerId: 'new', 'newCustomer.name': 'Wendy Waits', 'newCustomer.email': email, productId: org.ebook.productId,
      amount: '19.9', currency: 'usd', paymentMethod: 'custom', sendEmail: 'true',
    }).toString(),
  });
  expect(res.statusCode).toBe(201);
  const purchaseId = /data-purchase-id="([^"]+)"/.exec(res.body)![1];
  // The run finds the purchase waiting: no receipt while the pool is empty.
  await eventually(async () => (h.mailbox.messages().some((m) => m.subject === 'License keys ran out: Ebook Pro' && m.text.includes(org.name)) ? true : undefined),
    30_000, 'the dry-pool alert');
  expect(h.mailbox.messages().filter((m) => m.to.includes(email))).toEqual([]);

  // Leaving the pool would strand the waiting sale: refused until it has its key; its limit may change.
  for (const licenseKeys of [{ source: 'generated', activationLimit: null }, null]) {
    const leave = await h.app.inject({ method: 'PUT', url: `/api/products/${org.ebook.productId}`, headers: bearer(org.apiKey), payload: { licenseKeys } });
    expect([leave.statusCode, leave.json().error]).toEqual([409, expect.stringMatching(/^1 purchase\(s\) wait for a license key from this product's pool/)]);
  }
  await setLicenseKeys(org, org.ebook.productId, { source: 'pool', activationLimit: 3 });

  expect((await upload(org.apiKey, org.ebook.productId, 'API-SALE-KEY-1\nAPI-SALE-KEY-2')).json()).toEqual({ added: 2, duplicates: 0 });
  const receipt = await h.mailbox.waitFor((m) => m.to.includes(email), 30_000);
  expect(receipt.subject).toBe('Your download: Ebook Pro');
  const key = await h.orm.em.fork().findOneOrFail(LicenseKey, { purchase: purchaseId });
  expect(key.key).toBe('API-SALE-KEY-1');
  await setLicenseKeys(org, org.ebook.productId, { source: 'generated', activationLimit: null });
}, 120_000);

test('a delivery that joins a run while its pool alert is still being retried is reported, not left pending', async () => {
  const org = await seedWebhookOrg(h, { platforms: ['cart-e'] });
  await setLicenseKeys(org, org.ebook.productId, { source: 'pool', activationLimit: null });
  expect((await upload(org.apiKey, org.ebook.productId, 'LAST-KEY-1')).json()).toEqual({ added: 1, duplicates: 0 });
  const body = orderBody('cart-e', org.orgId, 'alert-join-1');
  const staffDeferred = () => h.mailbox.rejections().some((r) => r.address.startsWith('owner-'));
  // The staff's relay defers: the run has reported its item and waits for the pool alert.
  h.mailbox.setReject({ match: (address) => address.startsWith('owner-'), code: 451 });
  let deliveryIds: string[];
  try {
    const first = await send(h.app, 'cart-e', org.orgId, body);
    await eventually(async () => (staffDeferred() ? true : undefined), 30_000, 'the pool alert deferred');
    const second = await send(h.app, 'cart-e', org.orgId, body);
    deliveryIds = [first.body.deliveryIds![0], second.body.deliveryIds![0]];
    const rows = () => h.orm.em.fork().execute('select 1 from workflow_dispatch where organisation_id = ?', [org.orgId]);
    await eventually(async () => ((await rows()).length === 0 ? true : undefined), 30_000, 'the second delivery handed to the run');
  } finally {
    h.mailbox.setReject(undefined);
  }
  const entries = await Promise.all(deliveryIds.map((id) => finalEntry(h, id, 90_000)));
  expect(entries.map((e) => e.status)).toEqual(['Success', 'Success']);
  const outcomes = await h.orm.em.fork().find(WebhookDeliveryItem, { delivery: { $in: deliveryIds } });
  expect(outcomes.map((i) => i.outcome).sort()).toEqual(['duplicate', 'fulfilled']);
}, 180_000);

describe('uploads', () => {
  let org: WebhookOrg;
  beforeAll(async () => {
    org = await seedWebhookOrg(h, { platforms: ['cart-e'] });
    await setLicenseKeys(org, org.ebook.productId, { source: 'pool', activationLimit: 5 });
  });

  test('refused whole, with the reason, when a key is too long, there are too many, or there are none', async () => {
    const tooLong = await upload(org.apiKey, org.ebook.productId, `FINE-1\n${'K'.repeat(201)}\nFINE-2`);
    expect([tooLong.statusCode, tooLong.json().error]).toEqual([400, 'line 2: a license key is at most 200 characters']);
    const tooMany = await upload(org.apiKey, org.ebook.productId, Array.from({ length: 10_001 }, (_, i) => `MANY-${i}`).join('\n'));
    expect([tooMany.statusCode, tooMany.json().error]).toEqual([400, 'at most 10000 license keys per upload']);
    const empty = await upload(org.apiKey, org.ebook.productId, '\n \n');
    expect(empty.statusCode).toBe(400);
    const nul = await upload(org.apiKey, org.ebook.productId, 'FINE-1\nNUL-\u0000-KEY');
    expect([nul.statusCode, nul.json().error]).toEqual([400, 'line 2: a license key contains a NUL character']);
    expect((await h.app.inject({ url: `/api/products/${org.ebook.productId}/license-keys`, headers: bearer(org.apiKey) })).json())
      .toEqual({ available: 0, issued: 0 });
  });

  test('10,000 keys in one upload; a key another product holds is a duplicate', async () => {
    const keys = Array.from({ length: 10_000 }, (_, i) => `BULK-${org.orgId}-${i}`);
    expect((await upload(org.apiKey, org.ebook.productId, keys.join('\n'))).json()).toEqual({ added: 10_000, duplicates: 0 });
    await setLicenseKeys(org, org.course.productId, { source: 'pool', activationLimit: null });
    expect((await upload(org.apiKey, org.course.productId, `${keys[0]}\nCOURSE-${org.orgId}`)).json()).toEqual({ added: 1, duplicates: 1 });
  });

  test('the longest upload is taken whatever its keys\' characters and the spaces around them', async () => {
    const keys = Array.from({ length: 10_000 }, (_, i) => `${String(i).padStart(5, '0')}-${org.orgId}-`.padEnd(200, 'é'));
    expect((await upload(org.apiKey, org.ebook.productId, keys.map((k) => ` ${k} `).join('\r\n'))).json()).toEqual({ added: 10_000, duplicates: 0 });
  });

  test('only to a pool product, only by owners and admins, only to the organisation\'s own products', async () => {
    const other = await seedWebhookOrg(h, { platforms: ['cart-e'] });
    const notPool = await upload(other.apiKey, other.ebook.productId, 'KEY-1');
    expect([notPool.statusCode, notPool.json().error]).toEqual([400, expect.stringMatching(/does not take uploaded keys/)]);
    expect((await upload(other.apiKey, org.ebook.productId, 'KEY-1')).statusCode).toBe(404);
    const member = await seedUser(h, org.orgId, 'member');
    expect((await upload(member.apiKey, org.ebook.productId, 'KEY-1')).statusCode).toBe(403);
    expect((await h.app.inject({ url: `/api/products/${org.ebook.productId}/license-keys`, headers: bearer(member.apiKey) })).statusCode).toBe(200);
    const policy = await h.app.inject({
      method: 'PUT', url: `/api/products/${org.ebook.productId}`, headers: bearer(member.apiKey), payload: { licenseKeys: null },
    });
    expect(policy.statusCode).toBe(403);
  });

  test('a key policy that is not one of §14\'s is 400 with the reason', async () => {
    for (const licenseKeys of [{ source: 'magic' }, { source: 'pool', activationLimit: 0 }, { source: 'pool', extra: 1 }, 'pool']) {
      const res = await h.app.inject({ method: 'PUT', url: `/api/products/${org.ebook.productId}`, headers: bearer(org.apiKey), payload: { licenseKeys } });
      expect([res.statusCode, res.json().error]).toEqual([400, expect.stringMatching(/licenseKeys/)]);
    }
  });
});
