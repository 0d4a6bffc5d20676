/**
 * Map-and-replay end to end over real HTTP (decisions §12, issue 15): sales of an SKU nobody knew,
 * from storefront-a and cart-e signed as those platforms sign, are held `unmatched`; staff map the
 * SKU to a live product and "deliver these". Each held sale is fulfilled once, through the same
 * workflow ids and keys as the webhook: whatever is clicked twice, by two people at once, or
 * redelivered by the platform meanwhile. Every test has its own organisation, SKU and buyers.
 */
import type { DevMail } from '../../src/dev/dev-mailbox';
import { Purchase, WebhookDelivery, type WebhookDeliveryItem } from '../../src/db/entities';
import type { Platform } from '../../src/domain/platforms';
import type { ItemOutcome } from '../../src/domain/statuses';
import type { Delivered, HeldSales } from '../../src/services/unmatched-replay';
import type { UnmatchedSkusJson } from '../../src/services/webhook-log';
import { listen } from '../helpers/download-links';
import { startHarness, type Harness } from '../helpers/harness';
import { seedProduct, seedUser, type SeededProduct } from '../helpers/seed';
import {
  edit, eventually, finalEntry, orderBody, seedWebhookOrg, send, settled, withEmail, withOrderId, type WebhookOrg,
} from '../helpers/webhooks';
import { PLATFORM_FIXTURES } from '../fixtures/platforms';

let h: Harness;
let baseUrl: string;

beforeAll(async () => {
  h = await startHarness();
  baseUrl = await listen(h);
});
afterAll(() => h?.close());

type Org = WebhookOrg & { name: string; auth: Record<string, string>; target: SeededProduct };

const TARGET_NAME = 'Ebook Pro Second Edition';
const RECEIPT_SUBJECT = `Your download: ${TARGET_NAME}`;

let serial = 0;
/** Unique per call (storefront-a's order ids are JSON numbers). */
const next = () => `${Date.now() % 1_000_000_000}${String(serial++).padStart(3, '0')}`;

/** An organisation with every integration, the samples' products, and a live product to map SKUs to. */
async function freshOrg(): Promise<Org> {
  const org = await seedWebhookOrg(h);
  const target = await seedProduct(h, org.orgId, { slug: `ebook-pro-2e-${next()}`, name: TARGET_NAME });
  return { ...org, auth: { authorization: `Bearer ${org.apiKey}` }, target };
}

/** A fresh SKU no product knows, in mixed case (SKUs match case-insensitively after trimming). */
const freshSku = () => `Legacy-Ebook-${next()}`;

interface Sale {
  platform: Platform;
  orderId: string;
  email: string;
  body: Buffer;
}

/**
 * The platform's sample as a new order by a new buyer whose ebook line carries `sku`: storefront-a's
 * second line (course-basic) stays known, cart-e's one product is the unknown one.
 */
function saleOf(org: Org, platform: 'storefront-a' | 'cart-e', sku: string): Sale {
  const id = next();
  const orderId = platform === 'storefront-a' ? id : `cart-${id}`;
  const email = `buyer-${platform}-${id}@example.com`;
  let body = withEmail(platform, withOrderId(platform, orderBody(platform, org.orgId), orderId), email);
  body = platform === 'storefront-a'
    ? edit(body, '"sku": "ebook-pro"', `"sku": "${sku}"`)
    : edit(body, '&permalink=ebook-pro&', `&permalink=${encodeURIComponent(sku)}&`);
  return { platform, orderId, email, body };
}

/** Sends a sale; its one entry once final and every run of it done. */
async function deliverWebhook(org: Org, sale: Sale): Promise<WebhookDelivery> {
  const res = await send(baseUrl, sale.platform, org.orgId, sale.body);
  expect(res.status).toBe(200);
  expect(res.body.deliveryIds).toHaveLength(1);
  const entry = await finalEntry(h, res.body.deliveryIds![0]);
  await settled(h, entry.id);
  return entry;
}

async function api<T>(method: 'GET' | 'POST', path: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
}

const skuPath = (sku: string) => `/api/unmatched-skus/${encodeURIComponent(sku)}`;
const heldSales = (org: Org, sku: string, auth = org.auth) => api<HeldSales>('GET', `${skuPath(sku)}/sales`, auth);
const mapSku = (org: Org, sku: string, productId: string, auth = org.auth) => api<HeldSales>('POST', `${skuPath(sku)}/map`, auth, { productId });
const deliverHeld = (org: Org, sku: string, auth = org.auth) => api<Delivered>('POST', `${skuPath(sku)}/deliver`, auth);

/** The counters of the Purchases page for this SKU (rows with count 0 are not listed). */
async function counters(org: Org, sku: string): Promise<{ total: number; mine: UnmatchedSkusJson['skus'] }> {
  const res = await api<UnmatchedSkusJson>('GET', '/api/unmatched-skus', org.auth);
  expect(res.status).toBe(200);
  return { total: res.body.total, mine: res.body.skus.filter((s) => s.sku === sku) };
}

async function entryOf(id: string): Promise<WebhookDelivery> {
  return h.orm.em.fork().findOneOrFail(WebhookDelivery, id, { populate: ['items'] });
}

const itemsOf = (entry: WebhookDelivery): WebhookDeliveryItem[] => entry.items.getItems().sort((a, b) => a.lineIndex - b.lineIndex);

/** The held line's entry after "deliver": no longer Pending, and every run it now lists done. */
async function replayed(entryId: string): Promise<WebhookDelivery> {
  await finalEntry(h, entryId);
  await settled(h, entryId);
  return entryOf(entryId);
}

const receiptsTo = (email: string): DevMail[] => h.mailbox.messages().filter((m) => m.to.includes(email) && m.subject === RECEIPT_SUBJECT);

async function targetPurchases(org: Org): Promise<Purchase[]> {
  return h.orm.em.fork().find(Purchase, { organisation: org.orgId, product: org.target.productId }, { populate: ['customer'] });
}

/** Fulfilment starts waiting in the outbox (a sent receipt's reminder, which follows it, is not one). */
async function outboxRows(org: Org): Promise<number> {
  const [{ n }] = await h.orm.em.fork().execute<Array<{ n: string }>>(
    `select count(*) as n from workflow_dispatch where organisation_id = ? and kind <> 'buyer-reminder'`, [org.orgId],
  );
  return Number(n);
}

describe('map and deliver the sales an unknown SKU held back', () => {
  test('two platforms: held, listed, mapped, delivered once each; statuses and the counter recomputed; a double click sends nothing', async () => {
    const org = await freshOrg();
    const sku = freshSku();
    const shop = saleOf(org, 'storefront-a', sku);
    const cart = saleOf(org, 'cart-e', sku);

    // Held: the unknown line is `unmatched` and keeps its order; storefront-a's other line is delivered.
    const shopEntry = await deliverWebhook(org, shop);
    expect(shopEntry.status).toBe('Success');
    expect(shopEntry.unmatched).toBe(true);
    expect(itemsOf(shopEntry).map((i) => [i.sku, i.outcome])).toEqual([[sku, 'unmatched'], ['course-basic', 'fulfilled']]);
    expect(itemsOf(shopEntry)[0].heldLine).toEqual({
      customer: { email: shop.email, name: 'Sam Buyer' }, amount: '29.00', currency: 'USD', test: false,
    });
    const cartEntry = await deliverWebhook(org, cart);
    expect(cartEntry.status).toBe('Error');
    expect(itemsOf(cartEntry).map((i) => [i.sku, i.outcome])).toEqual([[sku, 'unmatched']]);
    expect(receiptsTo(shop.email)).toHaveLength(0);
    expect(receiptsTo(cart.email)).toHaveLength(0);

    const before = await counters(org, sku);
    expect(before.mine.map((s) => [s.platform, s.count]).sort()).toEqual([['cart-e', 1], ['storefront-a', 1]]);
    expect(before.total).toBe(2);

    // Listed (members may look), oldest first; matched case-insensitively after trimming.
    const member = await seedUser(h, org.orgId, 'member');
    const listed = await heldSales(org, ` ${sku.toLowerCase()} `, { authorization: `Bearer ${member.apiKey}` });
    expect(listed.status).toBe(200);
    expect(listed.body.productId).toBeNull();
    expect(listed.body.sales.map((s) => [s.platform, s.externalOrderId, s.customerEmail, s.deliverable, s.itemId])).toEqual([
      ['storefront-a', shop.orderId, shop.email, true, itemsOf(shopEntry)[0].id],
      ['cart-e', cart.orderId, cart.email, true, itemsOf(cartEntry)[0].id],
    ]);

    // Not mapped yet: nothing to deliver to.
    const early = await deliverHeld(org, sku);
    expect(early.status).toBe(409);
    expect((await entryOf(cartEntry.id)).status).toBe('Error');

    // Mapping adds it to the product's extra SKUs and lists the sales; mapping again changes nothing.
    const mapped = await mapSku(org, sku, org.target.productId);
    expect(mapped.status).toBe(200);
    expect(mapped.body.productId).toBe(org.target.productId);
    expect(mapped.body.sales.map((s) => s.itemId)).toEqual(listed.body.sales.map((s) => s.itemId));
    const product = await api<{ product: { skus: string[] } }>('GET', `/api/products/${org.target.productId}`, org.auth);
    expect(product.status).toBe(200);
    expect(product.body.product.skus).toEqual([sku.toLowerCase()]);
    expect((await mapSku(org, sku, org.target.productId)).status).toBe(200);
    // Mapping delivers nothing by itself.
    expect(await outboxRows(org)).toBe(0);
    expect((await entryOf(shopEntry.id)).items.getItems().find((i) => i.sku === sku)!.outcome).toBe('unmatched');

    const delivered = await deliverHeld(org, sku);
    expect(delivered.status).toBe(200);
    expect(delivered.body).toEqual({ sku, productId: org.target.productId, delivering: 2, notDeliverable: 0 });

    const shopAfter = await replayed(shopEntry.id);
    const cartAfter = await replayed(cartEntry.id);
    expect(shopAfter.status).toBe('Success');
    expect(shopAfter.unmatched).toBe(false);
    expect(itemsOf(shopAfter).map((i) => [i.sku, i.outcome])).toEqual([[sku, 'fulfilled'], ['course-basic', 'fulfilled']]);
    expect(cartAfter.status).toBe('Success');
    expect(cartAfter.unmatched).toBe(false);
    expect(itemsOf(cartAfter).map((i) => [i.sku, i.outcome])).toEqual([[sku, 'fulfilled']]);
    // The same workflow ids a webhook of the order would use.
    expect(itemsOf(shopAfter)[0].workflowId).toContain(`/${shop.orderId}/${org.target.productId}`);
    expect(shopAfter.workflowIds).toContain(itemsOf(shopAfter)[0].workflowId);
    expect(cartAfter.workflowIds).toContain(itemsOf(cartAfter)[0].workflowId);

    const purchases = await targetPurchases(org);
    expect(purchases.map((p) => [p.source, p.externalOrderId, p.customer.email, p.amount, p.currency, p.receiptStatus]).sort()).toEqual([
      ['cart-e', cart.orderId, cart.email, PLATFORM_FIXTURES['cart-e'].skus['ebook-pro'], 'USD', 'sent'],
      ['storefront-a', shop.orderId, shop.email, PLATFORM_FIXTURES['storefront-a'].skus['ebook-pro'], 'USD', 'sent'],
    ]);
    expect(itemsOf(shopAfter)[0].purchase?.id).toBe(purchases.find((p) => p.source === 'storefront-a')!.id);
    expect(itemsOf(cartAfter)[0].purchase?.id).toBe(purchases.find((p) => p.source === 'cart-e')!.id);

    for (const email of [shop.email, cart.email]) {
      const receipts = receiptsTo(email);
      expect(receipts).toHaveLength(1);
      expect(receipts[0].text).toMatch(/http:\/\/delivery\.test\/d\/[A-Za-z0-9_-]{20,}/);
    }

    const after = await counters(org, sku);
    expect(after.mine).toEqual([]);
    expect(after.total).toBe(0);
    expect((await heldSales(org, sku)).body.sales).toEqual([]);

    // A double click: nothing left to deliver, nothing dispatched, nothing sent, nothing changed.
    const mails = h.mailbox.messages().length;
    const again = await deliverHeld(org, sku);
    expect(again.status).toBe(200);
    expect(again.body.delivering).toBe(0);
    expect(await outboxRows(org)).toBe(0);
    expect((await entryOf(cartEntry.id)).status).toBe('Success');
    expect(itemsOf(await entryOf(shopEntry.id)).map((i) => i.outcome)).toEqual(['fulfilled', 'fulfilled']);
    expect(await targetPurchases(org)).toHaveLength(2);
    expect(h.mailbox.messages().length).toBe(mails);
  });

  test('two staff deliver at once: each held sale is claimed by one of them, one purchase and one receipt each', async () => {
    const org = await freshOrg();
    const admin = await seedUser(h, org.orgId, 'admin');
    const sku = freshSku();
    const sales = [saleOf(org, 'storefront-a', sku), saleOf(org, 'cart-e', sku), saleOf(org, 'storefront-a', sku)];
    const entries: WebhookDelivery[] = [];
    for (const sale of sales) entries.push(await deliverWebhook(org, sale));
    expect((await mapSku(org, sku, org.target.productId)).status).toBe(200);

    const [byOwner, byAdmin] = await Promise.all([
      deliverHeld(org, sku),
      deliverHeld(org, sku, { authorization: `Bearer ${admin.apiKey}` }),
    ]);
    expect([byOwner.status, byAdmin.status]).toEqual([200, 200]);
    // The lines are claimed row by row: together the two calls deliver each held line exactly once.
    expect(byOwner.body.delivering + byAdmin.body.delivering).toBe(3);

    for (const entry of entries) {
      const after = await replayed(entry.id);
      expect(after.status).toBe('Success');
      expect(itemsOf(after).find((i) => i.sku === sku)!.outcome).toBe('fulfilled');
    }
    const purchases = await targetPurchases(org);
    expect(purchases.map((p) => p.externalOrderId).sort()).toEqual(sales.map((s) => s.orderId).sort());
    for (const sale of sales) expect(receiptsTo(sale.email)).toHaveLength(1);
    expect((await counters(org, sku)).mine).toEqual([]);

    // And a third click, after both: nothing.
    expect((await deliverHeld(org, sku)).body.delivering).toBe(0);
    expect(await outboxRows(org)).toBe(0);
  });

  test('the platform redelivers the order after mapping, before "deliver": one purchase, one receipt, the held line a duplicate', async () => {
    const org = await freshOrg();
    const sku = freshSku();
    const sale = saleOf(org, 'storefront-a', sku);
    const held = await deliverWebhook(org, sale);
    expect((await mapSku(org, sku, org.target.productId)).status).toBe(200);

    // The redelivery now matches the SKU: its line is fulfilled by the webhook itself.
    const redelivery = await deliverWebhook(org, sale);
    expect(itemsOf(redelivery).map((i) => [i.sku, i.outcome])).toEqual([[sku, 'fulfilled'], ['course-basic', 'duplicate']]);
    expect(receiptsTo(sale.email)).toHaveLength(1);

    const delivered = await deliverHeld(org, sku);
    expect(delivered.body.delivering).toBe(1);
    const after = await replayed(held.id);
    const [line] = itemsOf(after);
    expect(line.outcome).toBe('duplicate');
    expect(after.status).toBe('Success');

    const purchases = await targetPurchases(org);
    expect(purchases).toHaveLength(1);
    expect(line.purchase?.id).toBe(purchases[0].id);
    expect(itemsOf(redelivery)[0].purchase?.id).toBe(purchases[0].id);
    // Every run of both entries is done: the receipt went once.
    await settled(h, redelivery.id);
    expect(receiptsTo(sale.email)).toHaveLength(1);
    expect((await counters(org, sku)).mine).toEqual([]);
  });

  test('the platform redelivers the order before the SKU is mapped: two held lines of one order, one purchase and one receipt', async () => {
    const org = await freshOrg();
    const sku = freshSku();
    const sale = saleOf(org, 'cart-e', sku);
    const first = await deliverWebhook(org, sale);
    const second = await deliverWebhook(org, sale);
    expect((await counters(org, sku)).mine.map((s) => s.count)).toEqual([2]);
    expect((await mapSku(org, sku, org.target.productId)).body.sales).toHaveLength(2);

    expect((await deliverHeld(org, sku)).body.delivering).toBe(2);
    const lines = [itemsOf(await replayed(first.id))[0], itemsOf(await replayed(second.id))[0]];
    // One run of the line's workflow id: the first line it reports gets the outcome, the other joined it.
    expect(lines.map((l) => l.outcome).sort()).toEqual<ItemOutcome[]>(['duplicate', 'fulfilled']);
    const purchases = await targetPurchases(org);
    expect(purchases).toHaveLength(1);
    expect(lines.map((l) => l.purchase?.id)).toEqual([purchases[0].id, purchases[0].id]);
    expect(receiptsTo(sale.email)).toHaveLength(1);
    expect((await counters(org, sku)).mine).toEqual([]);
  });

  test('the platform redelivers the order while "deliver" runs: one purchase, one receipt, one line fulfilled and the other a duplicate', async () => {
    const org = await freshOrg();
    const sku = freshSku();
    const sales = [saleOf(org, 'cart-e', sku), saleOf(org, 'storefront-a', sku)];
    const held: WebhookDelivery[] = [];
    for (const sale of sales) held.push(await deliverWebhook(org, sale));
    expect((await mapSku(org, sku, org.target.productId)).status).toBe(200);

    const [delivered, ...redeliveries] = await Promise.all([
      deliverHeld(org, sku),
      ...sales.map((sale) => send(baseUrl, sale.platform, org.orgId, sale.body)),
    ]);
    expect(delivered.status).toBe(200);
    expect(delivered.body.delivering).toBe(2);
    for (const [index, sale] of sales.entries()) {
      const redelivery = redeliveries[index];
      expect(redelivery.status).toBe(200);
      const again = await finalEntry(h, redelivery.body.deliveryIds![0]);
      await settled(h, again.id);
      const before = await replayed(held[index].id);
      const heldLine = itemsOf(before).find((i) => i.sku === sku)!;
      const newLine = itemsOf(await entryOf(again.id)).find((i) => i.sku === sku)!;
      // Whichever came first got the purchase; the other joined it.
      expect([heldLine.outcome, newLine.outcome].sort()).toEqual<ItemOutcome[]>(['duplicate', 'fulfilled']);
      expect(before.status).toBe('Success');
      const purchases = (await targetPurchases(org)).filter((p) => p.externalOrderId === sale.orderId);
      expect(purchases).toHaveLength(1);
      expect(heldLine.purchase?.id).toBe(purchases[0].id);
      expect(newLine.purchase?.id).toBe(purchases[0].id);
      expect(receiptsTo(sale.email)).toHaveLength(1);
    }
  });
});

describe('refusals', () => {
  test('409 while the SKU maps to no product, or to one that is not live; nothing changes', async () => {
    const org = await freshOrg();
    const sku = freshSku();
    const sale = saleOf(org, 'cart-e', sku);
    const held = await deliverWebhook(org, sale);
    expect((await deliverHeld(org, sku)).status).toBe(409);

    const draft = await seedProduct(h, org.orgId, { slug: `draft-${next()}`, status: 'draft' });
    expect((await mapSku(org, sku, draft.productId)).status).toBe(200);
    const refused = await deliverHeld(org, sku);
    expect(refused.status).toBe(409);
    expect(JSON.stringify(refused.body)).toMatch(/not live/);

    // Published but without a version to deliver.
    const sku2 = freshSku();
    const sale2 = saleOf(org, 'storefront-a', sku2);
    const held2 = await deliverWebhook(org, sale2);
    const empty = await seedProduct(h, org.orgId, { slug: `empty-${next()}`, withVersion: false });
    expect((await mapSku(org, sku2, empty.productId)).status).toBe(200);
    expect((await deliverHeld(org, sku2)).status).toBe(409);

    expect(await outboxRows(org)).toBe(0);
    expect(itemsOf(await entryOf(held.id)).map((i) => i.outcome)).toEqual(['unmatched']);
    expect(itemsOf(await entryOf(held2.id)).map((i) => i.outcome)).toEqual(['unmatched', 'fulfilled']);
    expect((await counters(org, sku)).mine.map((s) => s.count)).toEqual([1]);
    expect(await targetPurchases(org)).toHaveLength(0);
  });

  test('SKUs mapped to one product at the same moment are all kept', async () => {
    const org = await freshOrg();
    const skus = Array.from({ length: 8 }, () => freshSku());
    await Promise.all(skus.map((sku) => deliverWebhook(org, saleOf(org, 'cart-e', sku))));
    const mapped = await Promise.all(skus.map((sku) => mapSku(org, sku, org.target.productId)));
    expect(mapped.map((m) => m.status)).toEqual(skus.map(() => 200));
    const product = await api<{ product: { skus: string[] } }>('GET', `/api/products/${org.target.productId}`, org.auth);
    expect([...product.body.product.skus].sort()).toEqual(skus.map((sku) => sku.toLowerCase()).sort());
  });

  test('members may list the held sales but not map or deliver them (403)', async () => {
    const org = await freshOrg();
    const sku = freshSku();
    await deliverWebhook(org, saleOf(org, 'cart-e', sku));
    const member = await seedUser(h, org.orgId, 'member');
    const auth = { authorization: `Bearer ${member.apiKey}` };
    expect((await heldSales(org, sku, auth)).status).toBe(200);
    expect((await mapSku(org, sku, org.target.productId, auth)).status).toBe(403);
    expect((await heldSales(org, sku)).body.productId).toBeNull();
    expect((await mapSku(org, sku, org.target.productId)).status).toBe(200);
    expect((await deliverHeld(org, sku, auth)).status).toBe(403);
    expect(await outboxRows(org)).toBe(0);
  });

  test('404 for an SKU no sale of this organisation was held back by', async () => {
    const org = await freshOrg();
    const other = await freshOrg();
    const sku = freshSku();
    await deliverWebhook(other, saleOf(other, 'cart-e', sku));
    for (const unknown of ['never-seen-sku', sku]) {
      expect((await heldSales(org, unknown)).status).toBe(404);
      expect((await mapSku(org, unknown, org.target.productId)).status).toBe(404);
      expect((await deliverHeld(org, unknown)).status).toBe(404);
    }
    // Nor is another organisation's product mappable.
    const sku2 = freshSku();
    await deliverWebhook(org, saleOf(org, 'cart-e', sku2));
    expect((await mapSku(org, sku2, other.target.productId)).status).toBe(404);
  });

  test('409 when the SKU already maps to another product, and nothing moves', async () => {
    const org = await freshOrg();
    const sku = freshSku();
    await deliverWebhook(org, saleOf(org, 'storefront-a', sku));
    expect((await mapSku(org, sku, org.target.productId)).status).toBe(200);
    const clash = await mapSku(org, sku, org.course.productId);
    expect(clash.status).toBe(409);
    expect((await heldSales(org, sku)).body.productId).toBe(org.target.productId);

    // A product made since with the SKU as its slug owns it: mapping it elsewhere is 409, to it 200.
    const sku2 = freshSku();
    await deliverWebhook(org, saleOf(org, 'cart-e', sku2));
    const owner = await seedProduct(h, org.orgId, { slug: sku2.toLowerCase(), name: 'Legacy Ebook' });
    expect((await mapSku(org, sku2, org.target.productId)).status).toBe(409);
    const toOwner = await mapSku(org, sku2, owner.productId);
    expect(toOwner.status).toBe(200);
    expect(toOwner.body.productId).toBe(owner.productId);
    const [{ n }] = await h.orm.em.fork().execute<Array<{ n: string }>>(
      'select count(*) as n from product_sku where organisation_id = ? and sku = ?', [org.orgId, sku2.toLowerCase()],
    );
    expect(Number(n)).toBe(1);
  });
});

test('a held sale of the organisation shows up with deliverable false when it kept no order (recorded before replay existed)', async () => {
  const org = await freshOrg();
  const sku = freshSku();
  const entry = await deliverWebhook(org, saleOf(org, 'cart-e', sku));
  await h.orm.em.fork().execute('update webhook_delivery_item set held_line = null where delivery_id = ?', [entry.id]);
  expect((await heldSales(org, sku)).body.sales.map((s) => s.deliverable)).toEqual([false]);
  expect((await mapSku(org, sku, org.target.productId)).status).toBe(200);
  const delivered = await deliverHeld(org, sku);
  expect(delivered.body).toMatchObject({ delivering: 0, notDeliverable: 1 });
  expect(itemsOf(await entryOf(entry.id)).map((i) => i.outcome)).toEqual(['unmatched']);
  await eventually(async () => ((await outboxRows(org)) === 0 ? true : undefined));
});
