/**
 * The findings of the security review of issue 23, one describe each: every test here failed on the
 * code before its fix.
 */
import { randomBytes } from 'node:crypto';
import { Product } from '../../src/db/entities';
import { Housekeeping } from '../../src/services/housekeeping';
import { applyRevocation } from '../../src/services/revocations';
import { webhookSample } from '../fixtures/samples';
import { startHarness, type Harness } from '../helpers/harness';
import { signIn } from '../helpers/dashboard';
import { seedOrganisation, seedProduct, seedUser } from '../helpers/seed';
import { edit, orderBody, revocationBody, sample, seedWebhookOrg, send, sendRevocation, withEmail, withOrderId, type WebhookOrg } from '../helpers/webhooks';

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ worker: false });
});
afterAll(() => h?.close());

let serial = 0;
/** Unique per call. */
const next = () => `${Date.now()}-${serial++}`;

/** The organisation a delivery log entry belongs to. */
async function ownerOf(deliveryId: string): Promise<string> {
  const [row] = await h.orm.em.fork().execute<Array<{ organisation_id: string }>>('select organisation_id from webhook_delivery where id = ?', [deliveryId]);
  return row.organisation_id;
}

describe('M4. payments-c account ids cannot be squatted', () => {
  test('org A registers org B\'s account id first: B still registers it, and B\'s order and dispute that name only the account reach B', async () => {
    const account = `acct_${next()}`;
    const squatter = await seedOrganisation(h);
    const owner = await seedOrganisation(h);
    const secretOf = { [squatter.orgId]: 'whsec_squatter_0123456789', [owner.orgId]: 'whsec_owner_0123456789abc' };
    for (const org of [squatter, owner]) {
      const res = await h.app.inject({
        method: 'PUT', url: '/api/settings/integrations/payments-c', headers: { authorization: `Bearer ${org.apiKey}` },
        payload: { secret: secretOf[org.orgId], accountId: account },
      });
      expect(res.statusCode).toBe(200);
    }
    const withAccount = (body: Buffer) => edit(body, '"object": "event",', `"object": "event",\n  "account": "${account}",`);
    const secrets = { secret: secretOf[owner.orgId] };
    const order = await send(h.app, 'payments-c', '', withAccount(sample('payments-c')), { secrets });
    expect(order.status).toBe(200);
    expect(await ownerOf(order.body.deliveryIds![0])).toBe(owner.orgId);
    const dispute = await sendRevocation(h.app, 'payments-c', '', withAccount(webhookSample('payments-c.dispute-created.json')), { secrets });
    expect(dispute.status).toBe(200);
    expect(await ownerOf(dispute.body.deliveryIds![0])).toBe(owner.orgId);
    // Signed by neither: still refused.
    expect((await send(h.app, 'payments-c', '', withAccount(sample('payments-c')), { secrets: { secret: 'whsec_nobody_0123456789' } })).status).toBe(401);
  });
});

describe('L2. reseller-d-classic signatures stay bound to their body for good', () => {
  test('a year and many housekeeping rounds later, the same security data with another body is still a replay (401)', async () => {
    const wh = await seedWebhookOrg(h, { platforms: ['reseller-d-classic'] });
    const signedAt = Math.floor(Date.now() / 1000);
    const body = orderBody('reseller-d-classic', wh.orgId, `ACME-L2-${next()}`);
    expect((await send(h.app, 'reseller-d-classic', wh.orgId, body, { nowSeconds: signedAt })).status).toBe(200);

    const aYearLater = new Date(Date.now() + 366 * 24 * 3600 * 1000);
    const housekeeping = new Housekeeping({
      orm: h.orm, clock: () => aYearLater, intervalMs: 60_000, eventRetentionMs: 60_000, sessions: { idleMs: 60_000, maxAgeMs: 60_000 }, log: console,
    });
    await housekeeping.runOnce();
    const forged = await send(h.app, 'reseller-d-classic', wh.orgId, orderBody('reseller-d-classic', wh.orgId, `ACME-L2-${next()}`), { nowSeconds: signedAt });
    expect(forged.status).toBe(401);
    expect(forged.body.error).toMatch(/replay/);
    // Two digests of 32 bytes each, whatever the nonce.
    const [row] = await h.orm.em.fork().execute<Array<{ n: number; b: number }>>(
      'select octet_length(nonce_sha256) as n, octet_length(body_sha256) as b from signature_nonce where organisation_id = ?', [wh.orgId],
    );
    expect(row).toEqual({ n: 32, b: 32 });
  });
});

describe('L3. NUL and lone surrogates are a clear 400 everywhere, never a 500 or a changed value', () => {
  let org: { orgId: string; apiKey: string };
  let productId: string;
  beforeAll(async () => {
    org = await seedOrganisation(h);
    productId = (await seedProduct(h, org.orgId)).productId;
  });
  const api = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object | string, type = 'application/json') => h.app.inject({
    method, url, payload, headers: { authorization: `Bearer ${org.apiKey}`, ...(payload === undefined ? {} : { 'content-type': type }) },
  });
  const sale = (fields: Record<string, string>) => new URLSearchParams({
    customerId: 'new', 'newCustomer.email': `buyer-${next()}@example.com`, productId, amount: '1.00', currency: 'USD', ...fields,
  }).toString();

  test.each([
    ['POST /api/products name with NUL', () => api('POST', '/api/products', { name: 'a\u0000b', slug: `nul-${next()}` })],
    ['POST /api/products name with a lone surrogate', () => api('POST', '/api/products', { name: 'a\ud800b', slug: `sur-${next()}` })],
    ['GET /api/customers?email=a%00b', () => api('GET', '/api/customers?email=a%00b')],
    ['POST /api/purchases newCustomer.name with NUL', () => api('POST', '/api/purchases', sale({ 'newCustomer.name': 'a\u0000b' }), 'application/x-www-form-urlencoded')],
    ['POST /api/purchases paymentMethod with NUL', () => api('POST', '/api/purchases', sale({ paymentMethod: 'card\u0000' }), 'application/x-www-form-urlencoded')],
    ['PUT /api/settings/organisation supportEmail with NUL', () => api('PUT', '/api/settings/organisation', { supportEmail: 'help\u0000@example.com' })],
  ])('%s → 400 that says why', async (_what, request) => {
    const res = await request();
    expect(res.statusCode).toBe(400);
    // A form post is answered in the form's own kind (an HTML fragment), JSON otherwise: either says why.
    expect(res.body).toMatch(/NUL|surrogate/);
  });

  test('the dashboard refuses a SKU beyond the index limit with a 4xx, and the product is not created', async () => {
    const admin = await seedUser(h, org.orgId, 'admin');
    const session = await signIn(h.app, admin.email);
    const slug = `long-sku-${next()}`;
    const res = await h.app.inject({
      method: 'POST', url: '/products', headers: { cookie: session.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      // Incompressible, so PostgreSQL cannot squeeze it under the index entry limit.
      payload: new URLSearchParams({ _csrf: session.csrf, name: 'Long SKU', slug, skus: randomBytes(3000).toString('base64') }).toString(),
    });
    expect(res.statusCode).toBeGreaterThanOrEqual(400);
    expect(res.statusCode).toBeLessThan(500);
    expect(await h.orm.em.fork().count(Product, { slug })).toBe(0);
  });

  test('a webhook SKU of 1000 characters beyond the index limit in bytes is a 400, not a 500', async () => {
    const wh = await seedWebhookOrg(h, { platforms: ['cart-e'] });
    // Incompressible three-byte characters: 3000 bytes, over what a B-tree entry holds.
    const sku = Array.from(randomBytes(1000), (byte, i) => String.fromCodePoint(0x4e00 + byte * 64 + (i % 64))).join('');
    const body = edit(orderBody('cart-e', wh.orgId), '&permalink=ebook-pro&', `&permalink=${encodeURIComponent(sku)}&`);
    const res = await send(h.app, 'cart-e', wh.orgId, body);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/too long/);
  });

  test('payments-c: a payment_intent with NUL is a 400, before and after the signature check', async () => {
    const wh = await seedWebhookOrg(h, { platforms: ['payments-c'] });
    const nul = 'pi_\\u0000x';
    // A dispute naming no organisation: its payment is looked up before any secret is chosen.
    const dispute = edit(webhookSample('payments-c.dispute-created.json'), /pi_3QpLiveExamplePayIntent01/g, nul);
    expect((await sendRevocation(h.app, 'payments-c', '', dispute)).status).toBe(400);
    const order = edit(orderBody('payments-c', wh.orgId), /pi_3QpLiveExamplePayIntent01/g, nul);
    const res = await send(h.app, 'payments-c', '', order);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/NUL/);
  });
});

describe('L8. one address per email field, also for held sales', () => {
  test('a held sale whose email is address-list syntax stays held when its SKU is delivered; a good one goes', async () => {
    const org = await seedWebhookOrg(h, { platforms: ['cart-e'] });
    const auth = { authorization: `Bearer ${org.apiKey}` };
    const sku = `legacy-${next()}`;
    for (const email of ['root,bob@x.test', `good-${next()}@example.com`]) {
      let body = withEmail('cart-e', withOrderId('cart-e', orderBody('cart-e', org.orgId), `sale-${next()}`), email);
      body = edit(body, '&permalink=ebook-pro&', `&permalink=${sku}&`);
      expect((await send(h.app, 'cart-e', org.orgId, body)).status).toBe(200);
    }
    const mapped = await h.app.inject({ method: 'POST', url: `/api/unmatched-skus/${sku}/map`, headers: auth, payload: { productId: org.ebook.productId } });
    expect(mapped.statusCode).toBe(200);
    expect((mapped.json() as { sales: Array<{ deliverable: boolean }> }).sales.map((s) => s.deliverable)).toEqual([false, true]);
    const delivered = await h.app.inject({ method: 'POST', url: `/api/unmatched-skus/${sku}/deliver`, headers: auth });
    expect(delivered.statusCode).toBe(200);
    expect(delivered.json()).toMatchObject({ delivering: 1, notDeliverable: 1 });
  });
});

describe('L9. reseller-d returns are neither dropped nor applied over a later restore', () => {
  const events = (body: Buffer) => (JSON.parse(body.toString('utf8')) as { events: unknown[] }).events;

  test('a batch mixing an order and a return records both', async () => {
    const org = await seedWebhookOrg(h, { platforms: ['reseller-d'] });
    const order = events(orderBody('reseller-d', org.orgId, `order-${next()}`));
    const ret = events(revocationBody('reseller-d', 'reseller-d.return.json', `returned-${next()}`));
    const res = await send(h.app, 'reseller-d', org.orgId, Buffer.from(JSON.stringify({ events: [...order, ...ret] })));
    expect(res.status).toBe(200);
    expect(res.body.deliveryIds).toHaveLength(2);
    const kinds = await h.orm.em.fork().execute<Array<{ kind: string }>>(
      'select kind from webhook_delivery where id in (?) order by kind', [res.body.deliveryIds],
    );
    expect(kinds.map((k) => k.kind)).toEqual(['order', 'refund']);
  });

  /** A recorded purchase of the ebook for a reseller-d order (the worker does not run here). */
  async function purchaseOf(org: WebhookOrg, orderId: string): Promise<string> {
    const [row] = await h.orm.em.fork().execute<Array<{ id: string }>>(
      `with c as (insert into customer (id, organisation_id, email, name, created_at) values (gen_random_uuid(), ?, ?, 'Buyer', now()) returning id)
       insert into purchase (id, organisation_id, product_id, version_id, customer_id, amount, currency, payment_method, source, external_order_id,
         test, receipt_status, created_at)
       select gen_random_uuid(), ?, ?, null, c.id, 29.00, 'USD', 'reseller-d', 'reseller-d', ?, false, 'sent', now() from c returning id`,
      [org.orgId, `buyer-${next()}@example.com`, org.orgId, org.ebook.productId, orderId],
    );
    return row.id;
  }

  /** Records a return of the order (with this event id) and applies it as its revocation run would. */
  async function returnOf(org: WebhookOrg, orderId: string, eventId: string): Promise<string> {
    const body = edit(revocationBody('reseller-d', 'reseller-d.return.json', orderId), 'wX7mQp3RtZ9kLb2nVc5sHd', eventId);
    const res = await sendRevocation(h.app, 'reseller-d', org.orgId, body);
    expect(res.status).toBe(200);
    return res.body.deliveryIds![0];
  }
  const apply = (org: WebhookOrg, orderId: string, deliveryId: string) => applyRevocation(
    h.orm.em.fork(), { orgId: org.orgId, platform: 'reseller-d', deliveryId, refKind: 'order', orderRef: orderId, reason: 'refund' }, new Date(),
  );
  const ebookOutcome = async (org: WebhookOrg, deliveryId: string) => (await h.orm.em.fork().execute<Array<{ outcome: string; reason: string | null }>>(
    'select outcome, reason from webhook_delivery_item where delivery_id = ? and product_id = ?', [deliveryId, org.ebook.productId],
  ))[0];
  const revoked = async (purchaseId: string) => (await h.orm.em.fork().execute<Array<{ revoked: boolean }>>(
    'select revoked_at is not null as revoked from purchase where id = ?', [purchaseId],
  ))[0].revoked;

  test('staff restore a refunded purchase: a return received before it, or a redelivery of the applied one, keeps access', async () => {
    const org = await seedWebhookOrg(h, { platforms: ['reseller-d'] });
    const orderId = `order-${next()}`;
    const purchaseId = await purchaseOf(org, orderId);
    const firstEventId = `event-${next()}`;
    const first = await returnOf(org, orderId, firstEventId);
    await apply(org, orderId, first);
    expect(await revoked(purchaseId)).toBe(true);
    // Received now, applied only after the restore (the run was late).
    const late = await returnOf(org, orderId, `event-${next()}`);

    const restore = await h.app.inject({ method: 'POST', url: `/api/purchases/${purchaseId}/restore`, headers: { authorization: `Bearer ${org.apiKey}` } });
    expect(restore.statusCode).toBe(200);

    await apply(org, orderId, late);
    expect(await ebookOutcome(org, late)).toEqual({ outcome: 'kept', reason: 'access restored by staff after this event' });
    expect(await revoked(purchaseId)).toBe(false);

    // The platform redelivers the first event (same event id) after the restore.
    const redelivered = await returnOf(org, orderId, firstEventId);
    await apply(org, orderId, redelivered);
    expect(await ebookOutcome(org, redelivered)).toEqual({ outcome: 'kept', reason: 'access restored by staff after this event' });
    expect(await revoked(purchaseId)).toBe(false);

    // A new event after the restore still revokes.
    const later = await returnOf(org, orderId, `event-${next()}`);
    await apply(org, orderId, later);
    expect(await ebookOutcome(org, later)).toMatchObject({ outcome: 'revoked' });
    expect(await revoked(purchaseId)).toBe(true);
  });
});
