/**
 * Refunds and disputes end to end, per platform, over real HTTP (decisions §9): each platform's
 * sample order is bought, then taken back by its refund sample (test/fixtures/webhooks), signed as
 * the platform signs it. Every test has its own organisation, order id (payments-c: payment) and
 * buyer address, so nothing one test does is seen by another.
 */
import { randomBytes } from 'node:crypto';
import type { DevMail } from '../../src/dev/dev-mailbox';
import { Purchase, WebhookDelivery } from '../../src/db/entities';
import type { ItemOutcome } from '../../src/domain/statuses';
import type { DeliveryJson } from '../../src/services/webhook-log';
import type { PurchaseJson } from '../../src/purchases/purchase-store';
import { startHarness, type Harness } from '../helpers/harness';
import { seedProduct, type SeededProduct } from '../helpers/seed';
import { freshLinkRunsSettled, issueToken, listen, seedPurchase, tokenOfLink } from '../helpers/download-links';
import {
  edit,
  finalEntry,
  orderBody,
  REFUND_SAMPLES,
  revocationBody,
  SAMPLE_SKUS,
  send,
  seedWebhookOrg,
  sendRevocation,
  settled,
  withEmail,
  withPaymentIntent,
  withPaymentsCOrg,
  type RefundingPlatform,
  type WebhookOrg,
} from '../helpers/webhooks';
import { PLATFORM_FIXTURES } from '../fixtures/platforms';

let h: Harness;
let baseUrl: string;

beforeAll(async () => {
  h = await startHarness();
  baseUrl = await listen(h);
});
afterAll(() => h?.close());

type Org = WebhookOrg & { name: string };
type Sku = 'ebook-pro' | 'course-basic';

const PRODUCT_NAMES: Record<Sku, string> = { 'ebook-pro': 'Ebook Pro', 'course-basic': 'Course Basic' };
const LINK_RE = /http:\/\/delivery\.test\/d\/[A-Za-z0-9_-]{20,}/g;
const WITHDRAWN = 'Access to this download has been withdrawn';

const productOf = (org: Org, sku: Sku): SeededProduct => (sku === 'ebook-pro' ? org.ebook : org.course);
const skusOf = (platform: RefundingPlatform) => SAMPLE_SKUS[platform] as Sku[];

/** The SKUs each platform's refund sample takes back: storefront-a's refunds one of its two lines. */
const REFUNDED_SKUS = (platform: RefundingPlatform): Sku[] => (platform === 'storefront-a' ? ['ebook-pro'] : skusOf(platform));

/**
 * The partial refund by amount of each platform that has one, about `ref`. plugin-b has none of its
 * own (a partial refund leaves the order's status as it was: the webhook is the order again) and
 * reseller-d neither (a return names the items it returns: that is a refund by line).
 */
const PARTIAL_REFUNDS: Partial<Record<RefundingPlatform, (ref: string) => Buffer>> = {
  'storefront-a': (ref) => revocationBody('storefront-a', 'storefront-a.refund-no-lines.json', ref),
  'payments-c': (ref) => revocationBody('payments-c', 'payments-c.charge-refunded-partial.json', ref),
  // The refund ping of a partly refunded sale (fixtures README: derived from the full one).
  'cart-e': (ref) => edit(revocationBody('cart-e', 'cart-e.refunded.txt', ref), '&refunded=true&', '&refunded=false&'),
};

/** One test's order: its id, what its refunds name (payments-c: the payment), its buyer. */
interface Ids {
  orderId: string;
  /** What the platform's refunds name: the order id, or payments-c's payment_intent. */
  ref: string;
  paymentIntent: string;
  email: string;
}

let serial = 0;
function freshIds(platform: RefundingPlatform): Ids {
  serial += 1;
  let orderId: string;
  if (PLATFORM_FIXTURES[platform].orderIdIsLeadingNumber) orderId = String(Date.now() * 1000 + serial); // < 2^53
  else if (platform === 'payments-c') orderId = `cs_live_${randomBytes(16).toString('hex')}`;
  // cart-e's sale ids are base64 (with `=`, `+`, `/`, form-encoded by withOrderId); reseller-d's base64url.
  else if (platform === 'cart-e') orderId = randomBytes(16).toString('base64');
  else orderId = randomBytes(16).toString('base64url').slice(0, 22);
  const paymentIntent = `pi_${randomBytes(12).toString('hex')}`;
  return {
    orderId,
    ref: platform === 'payments-c' ? paymentIntent : orderId,
    paymentIntent,
    email: `buyer-${randomBytes(4).toString('hex')}@example.com`,
  };
}

/** The platform's order sample for this test: its order id, payment and buyer. */
function orderFor(platform: RefundingPlatform, orgId: string, ids: Ids): Buffer {
  const body = withEmail(platform, orderBody(platform, orgId, ids.orderId), ids.email);
  return platform === 'payments-c' ? withPaymentIntent(body, ids.paymentIntent) : body;
}

const refundFor = (platform: RefundingPlatform, ids: Ids): Buffer => revocationBody(platform, REFUND_SAMPLES[platform], ids.ref);

const mailsTo = (email: string): DevMail[] => h.mailbox.messages().filter((m) => m.to.includes(email));
const receiptSubject = (sku: Sku) => `Your download: ${PRODUCT_NAMES[sku]}`;

async function purchasesBySku(orgId: string): Promise<Map<Sku, Purchase>> {
  const purchases = await h.orm.em.fork().find(Purchase, { organisation: orgId }, { populate: ['product'] });
  return new Map(purchases.map((p) => [p.product.slug as Sku, p]));
}

/** The entry's items in line order. */
const itemsOf = (entry: WebhookDelivery) => entry.items.getItems().sort((a, b) => a.lineIndex - b.lineIndex);
const outcomesOf = (entry: WebhookDelivery): Array<ItemOutcome | null> => itemsOf(entry).map((i) => i.outcome);

interface Bought {
  entryId: string;
  purchases: Map<Sku, Purchase>;
  /** The token of the link in each product's receipt. */
  tokens: Map<Sku, string>;
}

/** Sends the order, waits for its runs to end and a receipt per product to arrive. */
async function buy(org: Org, platform: RefundingPlatform, ids: Ids): Promise<Bought> {
  const res = await send(baseUrl, platform, org.orgId, orderFor(platform, org.orgId, ids));
  expect(res.status).toBe(200);
  const entryId = res.body.deliveryIds![0];
  const entry = await finalEntry(h, entryId);
  expect(entry.status).toBe('Success');
  expect(outcomesOf(entry)).toEqual(skusOf(platform).map(() => 'fulfilled'));
  await settled(h, entryId);
  const tokens = new Map<Sku, string>();
  for (const sku of skusOf(platform)) {
    const receipt = await h.mailbox.waitFor((m) => m.to.includes(ids.email) && m.subject === receiptSubject(sku), 10_000);
    tokens.set(sku, tokenOfLink(receipt.text.match(LINK_RE)![0]));
  }
  const purchases = await purchasesBySku(org.orgId);
  expect([...purchases.keys()].sort()).toEqual([...skusOf(platform)].sort());
  return { entryId, purchases, tokens };
}

/** Sends a refund or dispute event; its one entry once final, and once its run has ended. */
async function takeBack(org: Org, platform: RefundingPlatform, body: Buffer): Promise<WebhookDelivery> {
  const res = await sendRevocation(baseUrl, platform, org.orgId, body);
  expect(res.status).toBe(200);
  expect(res.body.received).toBe(true);
  expect(res.body.deliveryIds).toHaveLength(1);
  const entry = await finalEntry(h, res.body.deliveryIds![0]);
  await settled(h, entry.id);
  return entry;
}

/** The link's page and a file URL answer 410 with the access-withdrawn page, and offer no fresh link. */
async function expectWithdrawn(token: string, product: SeededProduct): Promise<void> {
  for (const url of [`/d/${token}`, `/d/${token}/files/${product.fileId}`]) {
    const res = await fetch(`${baseUrl}${url}`);
    const page = await res.text();
    expect([url, res.status]).toEqual([url, 410]);
    expect(page).toContain(WITHDRAWN);
    expect(page).not.toContain('/refresh');
  }
}

/** The link's page opens and its file downloads, byte for byte. */
async function expectDownloads(token: string, product: SeededProduct): Promise<void> {
  const page = await fetch(`${baseUrl}/d/${token}`);
  expect(page.status).toBe(200);
  expect(await page.text()).not.toContain(WITHDRAWN);
  const file = await fetch(`${baseUrl}/d/${token}/files/${product.fileId}`);
  expect(file.status).toBe(200);
  expect(Buffer.from(await file.arrayBuffer()).equals(product.fileBytes)).toBe(true);
}

/** /my requests made so far by this file: each starts one freshLinks run. */
let myRequests = 0;

/**
 * POST /my for `email`, after giving it one more purchase in the organisation (Bonus Pack) so that
 * the run always sends this organisation's email: once every run so far has completed, the one
 * email it sent is returned, and no other came.
 */
async function linksByMy(org: Org, email: string): Promise<DevMail> {
  const bonus = await seedProduct(h, org.orgId, { name: 'Bonus Pack' });
  await seedPurchase(h, org.orgId, bonus, { email });
  const res = await fetch(`${baseUrl}/my`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ email }).toString(),
  });
  expect(res.status).toBe(200);
  myRequests += 1;
  await h.mailbox.waitFor((m) => m.to.includes(email) && m.text.includes('Bonus Pack'), 20_000);
  await freshLinkRunsSettled(h, myRequests);
  const sent = mailsTo(email).filter((m) => !m.subject.startsWith('Your download:'));
  expect(sent).toHaveLength(1);
  return sent[0];
}

async function apiGet<T>(org: Org, path: string): Promise<T> {
  const res = await fetch(`${baseUrl}${path}`, { headers: { authorization: `Bearer ${org.apiKey}` } });
  expect(res.status).toBe(200);
  return (await res.json()) as T;
}

describe.each((Object.keys(REFUND_SAMPLES) as RefundingPlatform[]).map((p) => [p]))('%s', (platform: RefundingPlatform) => {
  const refunded = REFUNDED_SKUS(platform);

  test('a refund withdraws the purchase: link and file answer 410, /my sends no link for it, its entry says revoked', async () => {
    const org = await seedWebhookOrg(h);
    const ids = freshIds(platform);
    const bought = await buy(org, platform, ids);

    const entry = await takeBack(org, platform, refundFor(platform, ids));
    expect(entry.kind).toBe('refund');
    expect(entry.status).toBe('Success');
    expect(entry.platform).toBe(platform);
    expect(entry.externalOrderId).toBe(ids.ref);
    expect(entry.id).not.toBe(bought.entryId);
    expect(outcomesOf(entry)).toEqual(refunded.map(() => 'revoked'));
    const revokedIds = refunded.map((sku) => bought.purchases.get(sku)!.id).sort();
    expect(itemsOf(entry).map((i) => i.purchase?.id).sort()).toEqual(revokedIds);

    const after = await purchasesBySku(org.orgId);
    for (const sku of skusOf(platform)) {
      const purchase = after.get(sku)!;
      if (refunded.includes(sku)) {
        expect([sku, purchase.revokeReason]).toEqual([sku, 'refund']);
        expect(purchase.revokedAt).toBeInstanceOf(Date);
        await expectWithdrawn(bought.tokens.get(sku)!, productOf(org, sku));
      } else {
        expect([sku, purchase.revokedAt, purchase.revokeReason]).toEqual([sku, null, null]);
        await expectDownloads(bought.tokens.get(sku)!, productOf(org, sku));
      }
    }

    // /my: a link for every purchase that is not revoked (Bonus Pack, and what the refund kept), none for the rest.
    const mail = await linksByMy(org, ids.email);
    const kept = ['Bonus Pack', ...skusOf(platform).filter((s) => !refunded.includes(s)).map((s) => PRODUCT_NAMES[s])];
    for (const name of kept) expect(mail.text).toContain(name);
    for (const sku of refunded) expect(mail.text).not.toContain(PRODUCT_NAMES[sku]);
    const links = [...new Set([...mail.text.matchAll(LINK_RE)].map((m) => m[0]))];
    expect(links).toHaveLength(kept.length);
    for (const link of links) expect((await fetch(`${baseUrl}/d/${tokenOfLink(link)}`)).status).toBe(200);

    // The log API lists the entry with its items' outcomes.
    const listed = (await apiGet<DeliveryJson[]>(org, '/api/webhook-deliveries')).find((d) => d.id === entry.id)!;
    expect(listed.kind).toBe('refund');
    expect(listed.status).toBe('Success');
    expect(listed.externalOrderId).toBe(ids.ref);
    expect(listed.items.map((i) => i.outcome)).toEqual(refunded.map(() => 'revoked'));
  });

  test('the same refund redelivered is a new entry whose items are already revoked; nothing else changes', async () => {
    const org = await seedWebhookOrg(h);
    const ids = freshIds(platform);
    const bought = await buy(org, platform, ids);
    const body = refundFor(platform, ids);
    const first = await takeBack(org, platform, body);
    expect(outcomesOf(first)).toEqual(refunded.map(() => 'revoked'));
    const revokedBefore = await purchasesBySku(org.orgId);
    const mailsBefore = mailsTo(ids.email).length;

    const again = await takeBack(org, platform, body);
    expect(again.id).not.toBe(first.id);
    expect(again.kind).toBe('refund');
    expect(again.status).toBe('Success');
    expect(again.externalOrderId).toBe(ids.ref);
    expect(outcomesOf(again)).toEqual(refunded.map(() => 'already revoked'));
    expect(itemsOf(again).map((i) => i.purchase?.id).sort()).toEqual(itemsOf(first).map((i) => i.purchase?.id).sort());

    // The first entry, the purchases and the mailbox are as they were.
    const firstNow = await h.orm.em.fork().findOneOrFail(WebhookDelivery, first.id, { populate: ['items'] });
    expect(outcomesOf(firstNow)).toEqual(outcomesOf(first));
    const revokedAfter = await purchasesBySku(org.orgId);
    expect(revokedAfter.size).toBe(revokedBefore.size);
    for (const [sku, purchase] of revokedBefore) {
      const now = revokedAfter.get(sku)!;
      expect([sku, now.revokedAt?.toISOString() ?? null, now.revokeReason]).toEqual([sku, purchase.revokedAt?.toISOString() ?? null, purchase.revokeReason]);
    }
    expect(mailsTo(ids.email)).toHaveLength(mailsBefore);
    for (const sku of refunded) await expectWithdrawn(bought.tokens.get(sku)!, productOf(org, sku));
  });

  test('a refund before its order: not found at once (a final entry), then the order is recorded revoked and no receipt goes out', async () => {
    const org = await seedWebhookOrg(h);
    const ids = freshIds(platform);
    let body = refundFor(platform, ids);
    // No purchase names the payment yet, so the charge names its organisation: the metadata it
    // carries is its PaymentIntent's, which the seller sets (payment_intent_data.metadata).
    if (platform === 'payments-c') body = withPaymentsCOrg(body, org.orgId);

    const early = await takeBack(org, platform, body);
    expect(early.kind).toBe('refund');
    expect(early.status).toBe('Success');
    expect(early.completedAt).toBeInstanceOf(Date);
    expect(early.externalOrderId).toBe(ids.ref);
    const expectedItems = platform === 'storefront-a' || platform === 'reseller-d' ? refunded.length : 1; // lines, or the whole order
    expect(outcomesOf(early)).toEqual(Array.from({ length: expectedItems }, () => 'not found'));
    for (const item of itemsOf(early)) {
      expect(item.purchase).toBeNull();
      expect(item.reason).toMatch(/will be revoked when the order arrives/);
    }

    const res = await send(baseUrl, platform, org.orgId, orderFor(platform, org.orgId, ids));
    expect(res.status).toBe(200);
    const order = await finalEntry(h, res.body.deliveryIds![0]);
    await settled(h, order.id);
    const orderNow = await h.orm.em.fork().findOneOrFail(WebhookDelivery, order.id, { populate: ['items'] });
    expect(orderNow.kind).toBe('order');
    expect(orderNow.status).toBe('Success');
    expect(itemsOf(orderNow).map((i) => [i.sku, i.outcome])).toEqual(
      skusOf(platform).map((sku) => [sku, refunded.includes(sku) ? 'revoked' : 'fulfilled']),
    );

    const purchases = await purchasesBySku(org.orgId);
    for (const sku of skusOf(platform)) {
      const purchase = purchases.get(sku)!;
      if (refunded.includes(sku)) {
        expect([sku, purchase.revokeReason, purchase.receiptStatus, purchase.receiptSentAt]).toEqual([sku, 'refund', 'skipped', null]);
        expect(purchase.revokedAt).toBeInstanceOf(Date);
        await expectWithdrawn(await issueToken(h, purchase.id), productOf(org, sku));
      } else {
        expect([sku, purchase.revokedAt, purchase.receiptStatus]).toEqual([sku, null, 'sent']);
      }
    }
    // Every run of the order has ended: only the products the refund did not name got a receipt.
    const kept = skusOf(platform).filter((sku) => !refunded.includes(sku));
    expect(mailsTo(ids.email).map((m) => m.subject).sort()).toEqual(kept.map(receiptSubject).sort());
  });

  (PARTIAL_REFUNDS[platform] ? test : test.skip)('a partial refund by amount keeps access: one item kept, the links still work', async () => {
    const org = await seedWebhookOrg(h);
    const ids = freshIds(platform);
    const bought = await buy(org, platform, ids);

    const entry = await takeBack(org, platform, PARTIAL_REFUNDS[platform]!(ids.ref));
    expect(entry.kind).toBe('refund');
    expect(entry.status).toBe('Success');
    expect(entry.externalOrderId).toBe(ids.ref);
    expect(entry.workflowIds).toEqual([]);
    expect(itemsOf(entry).map((i) => [i.sku, i.outcome, i.reason, i.purchase])).toEqual([[null, 'kept', 'partial refund, access kept', null]]);

    const purchases = await purchasesBySku(org.orgId);
    for (const sku of skusOf(platform)) {
      expect([sku, purchases.get(sku)!.revokedAt]).toEqual([sku, null]);
      await expectDownloads(bought.tokens.get(sku)!, productOf(org, sku));
    }
  });
});

test('storefront-a: a refund of one of two lines revokes that product only; the other still downloads and is offered by /my', async () => {
  const platform = 'storefront-a';
  const org = await seedWebhookOrg(h);
  const ids = freshIds(platform);
  const bought = await buy(org, platform, ids);

  const entry = await takeBack(org, platform, refundFor(platform, ids));
  expect(itemsOf(entry).map((i) => [i.sku, i.product?.id, i.outcome, i.purchase?.id])).toEqual([
    ['ebook-pro', org.ebook.productId, 'revoked', bought.purchases.get('ebook-pro')!.id],
  ]);
  const purchases = await purchasesBySku(org.orgId);
  expect(purchases.get('ebook-pro')!.revokeReason).toBe('refund');
  expect(purchases.get('course-basic')!.revokedAt).toBeNull();
  await expectWithdrawn(bought.tokens.get('ebook-pro')!, org.ebook);
  await expectDownloads(bought.tokens.get('course-basic')!, org.course);
  // A new link of the kept purchase works too; one of the refunded purchase does not.
  await expectDownloads(await issueToken(h, purchases.get('course-basic')!.id), org.course);
  await expectWithdrawn(await issueToken(h, purchases.get('ebook-pro')!.id), org.ebook);

  const mail = await linksByMy(org, ids.email);
  expect(mail.subject).toBe(`Your 2 download links from ${org.name}`);
  expect(mail.text).toContain('Course Basic');
  expect(mail.text).not.toContain('Ebook Pro');
});

test('storefront-a: a refund of the ebook and of a line without a SKU (gift wrap) revokes the ebook only', async () => {
  const platform = 'storefront-a';
  const org = await seedWebhookOrg(h);
  const ids = freshIds(platform);
  const bought = await buy(org, platform, ids);

  const refund = JSON.parse(refundFor(platform, ids).toString('utf8')) as { refund_line_items: Array<{ id: number; line_item: { id: number; sku: string | null } }> };
  const [line] = refund.refund_line_items;
  refund.refund_line_items.push({ ...line, id: line.id + 1, line_item: { ...line.line_item, id: line.line_item.id + 1, sku: null } });
  const entry = await takeBack(org, platform, Buffer.from(JSON.stringify(refund)));
  expect(itemsOf(entry).map((i) => [i.sku, i.outcome, i.purchase?.id ?? null])).toEqual([
    ['ebook-pro', 'revoked', bought.purchases.get('ebook-pro')!.id],
    [null, 'not found', null],
  ]);
  const purchases = await purchasesBySku(org.orgId);
  expect(purchases.get('ebook-pro')!.revokeReason).toBe('refund');
  expect(purchases.get('course-basic')!.revokedAt).toBeNull();
  await expectDownloads(bought.tokens.get('course-basic')!, org.course);
});

const DISPUTES: Array<[RefundingPlatform, string]> = [
  ['payments-c', 'payments-c.dispute-created.json'],
  ['cart-e', 'cart-e.disputed.txt'],
];

test.each(DISPUTES)('%s: a dispute is an entry of kind dispute that revokes the order with reason chargeback', async (platform, file) => {
  const org = await seedWebhookOrg(h);
  const ids = freshIds(platform);
  const bought = await buy(org, platform, ids);

  // payments-c: the dispute names no organisation (its metadata is its own, empty): routed by the payment's purchases.
  const entry = await takeBack(org, platform, revocationBody(platform, file, ids.ref));
  expect(entry.kind).toBe('dispute');
  expect(entry.status).toBe('Success');
  expect(entry.externalOrderId).toBe(ids.ref);
  expect(outcomesOf(entry)).toEqual(skusOf(platform).map(() => 'revoked'));
  const logged = (await apiGet<DeliveryJson[]>(org, '/api/webhook-deliveries')).find((d) => d.id === entry.id)!;
  expect([logged.kind, logged.items.map((i) => i.outcome)]).toEqual(['dispute', skusOf(platform).map(() => 'revoked')]);

  const listed = await apiGet<PurchaseJson[]>(org, '/api/purchases');
  expect(listed).toHaveLength(skusOf(platform).length);
  for (const purchase of listed) {
    expect(purchase.externalOrderId).toBe(ids.orderId);
    expect(purchase.revokeReason).toBe('chargeback');
    expect(purchase.revokedAt).not.toBeNull();
    expect(new Date(purchase.revokedAt!).getTime()).toBeGreaterThanOrEqual(new Date(purchase.createdAt).getTime());
  }
  for (const sku of skusOf(platform)) await expectWithdrawn(bought.tokens.get(sku)!, productOf(org, sku));
});
