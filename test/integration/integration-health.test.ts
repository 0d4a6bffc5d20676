/**
 * Integration health (decisions §15): each refusal of the front door shows under its named reason
 * with its count, a verified delivery moves lastVerifiedAt and verified24h, and the answers to the
 * platforms stay what they were. Real signed deliveries through the app, real PostgreSQL.
 */
import type { IntegrationHealthJson } from '../../src/services/integration-settings';
import type { Platform } from '../../src/domain/platforms';
import { recordRefusal } from '../../src/accounts/integration-health-store';
import { IntegrationHealth } from '../../src/db/entities';
import { startHarness, type Harness } from '../helpers/harness';
import { seedUser } from '../helpers/seed';
import { signIn } from '../helpers/dashboard';
import { configureIntegration, edit, orderBody, sample, seedWebhookOrg, send, type SendOptions } from '../helpers/webhooks';

let h: Harness;
/** The harness's clock: real time unless a test moves it. */
let clockOffsetMs = 0;

beforeAll(async () => {
  h = await startHarness({ worker: false, clock: () => new Date(Date.now() + clockOffsetMs) });
});
afterEach(() => {
  clockOffsetMs = 0;
});
afterAll(() => h?.close());

const HOUR = 3600_000;
let orders = 0;
const nextOrder = () => String(7_100_000 + (orders += 1));

async function healthOf(apiKey: string): Promise<Record<string, IntegrationHealthJson>> {
  const res = await h.app.inject({ method: 'GET', url: '/api/settings/integrations', headers: { authorization: `Bearer ${apiKey}` } });
  expect(res.statusCode).toBe(200);
  return Object.fromEntries((res.json() as Array<{ platform: string; health: IntegrationHealthJson }>).map((i) => [i.platform, i.health]));
}

async function health(apiKey: string, platform: Platform): Promise<IntegrationHealthJson> {
  return (await healthOf(apiKey))[platform];
}

const NONE: IntegrationHealthJson = { lastVerifiedAt: null, lastRefusedAt: null, lastRefusalReason: null, verified24h: 0, refused24h: 0 };

/** Matches an ISO time within [from, to] (the front door's clock). */
function between(from: number, to: number) {
  return {
    asymmetricMatch: (value: unknown) => typeof value === 'string' && Date.parse(value) >= from && Date.parse(value) <= to,
    toString: () => `an ISO time between ${new Date(from).toISOString()} and ${new Date(to).toISOString()}`,
  };
}

/** Sends, checks the answer is exactly as before health existed, and answers the integration's health after it. */
async function refusedWith(
  org: { orgId: string; apiKey: string }, platform: Platform, body: Buffer, options: SendOptions,
  answer: { status: number; error: string | RegExp },
): Promise<IntegrationHealthJson> {
  const before = Date.now();
  const res = await send(h.app, platform, org.orgId, body, options);
  expect(res.status).toBe(answer.status);
  expect(res.body.error).toMatch(answer.error);
  const after = await health(org.apiKey, platform);
  expect(after.lastRefusedAt).toEqual(between(before, Date.now()));
  return after;
}

test('before any delivery every platform says so', async () => {
  const org = await seedWebhookOrg(h);
  const all = await healthOf(org.apiKey);
  expect(Object.values(all)).toHaveLength(6);
  for (const value of Object.values(all)) expect(value).toEqual(NONE);
});

test('a verified delivery updates lastVerifiedAt and verified24h; concurrent ones are each counted', async () => {
  const org = await seedWebhookOrg(h);
  const before = Date.now();
  const res = await send(h.app, 'storefront-a', org.orgId, orderBody('storefront-a', org.orgId, nextOrder()));
  expect(res.status).toBe(200);
  expect(await health(org.apiKey, 'storefront-a')).toEqual({
    lastVerifiedAt: between(before, Date.now()), lastRefusedAt: null, lastRefusalReason: null, verified24h: 1, refused24h: 0,
  });
  // Group-committed together: one statement may hold several of them.
  const answers = await Promise.all(Array.from({ length: 20 }, () => send(h.app, 'storefront-a', org.orgId, orderBody('storefront-a', org.orgId, nextOrder()))));
  expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
  expect((await health(org.apiKey, 'storefront-a')).verified24h).toBe(21);
  // Another platform of the organisation is another integration.
  expect(await health(org.apiKey, 'plugin-b')).toEqual(NONE);
});

test('a verified event with nothing to act on counts as verified', async () => {
  const org = await seedWebhookOrg(h);
  const ignored = edit(orderBody('payments-c', org.orgId), '"checkout.session.completed"', '"customer.created"');
  expect((await send(h.app, 'payments-c', org.orgId, ignored)).body).toEqual({ received: true, deliveryIds: [] });
  expect(await health(org.apiKey, 'payments-c')).toMatchObject({ verified24h: 1, refused24h: 0 });
});

describe('each refusal names its reason and counts, the answer unchanged', () => {
  test('signature mismatch', async () => {
    const org = await seedWebhookOrg(h);
    const after = await refusedWith(org, 'storefront-a', orderBody('storefront-a', org.orgId), { secrets: { secret: 'not-the-secret' } },
      { status: 401, error: 'invalid or missing signature' });
    expect(after).toMatchObject({ lastRefusalReason: 'signature mismatch', refused24h: 1, verified24h: 0, lastVerifiedAt: null });
  });

  test('signature header missing (a header, or cart-e\'s ?secret=)', async () => {
    const org = await seedWebhookOrg(h);
    expect(await refusedWith(org, 'reseller-d', sample('reseller-d'), { unsigned: true }, { status: 401, error: 'invalid or missing signature' }))
      .toMatchObject({ lastRefusalReason: 'signature header missing', refused24h: 1 });
    expect(await refusedWith(org, 'cart-e', sample('cart-e'), { unsigned: true }, { status: 401, error: 'invalid or missing signature' }))
      .toMatchObject({ lastRefusalReason: 'signature header missing', refused24h: 1 });
  });

  test('timestamp outside tolerance (payments-c, on its shared route)', async () => {
    const org = await seedWebhookOrg(h);
    const stale = Math.floor(Date.now() / 1000) - 3600;
    const after = await refusedWith(org, 'payments-c', orderBody('payments-c', org.orgId), { nowSeconds: stale },
      { status: 401, error: 'invalid or missing signature' });
    expect(after).toMatchObject({ lastRefusalReason: 'timestamp outside tolerance', refused24h: 1 });
  });

  test('integration not configured', async () => {
    const org = await seedWebhookOrg(h, { platforms: ['storefront-a'] });
    const after = await refusedWith(org, 'plugin-b', sample('plugin-b'), {}, { status: 401, error: 'the plugin-b integration is not configured' });
    expect(after).toMatchObject({ lastRefusalReason: 'integration not configured', refused24h: 1 });
  });

  test('signed value replayed (reseller-d-classic)', async () => {
    const org = await seedWebhookOrg(h, { platforms: ['reseller-d-classic'] });
    const signedAt = Math.floor(Date.now() / 1000);
    expect((await send(h.app, 'reseller-d-classic', org.orgId, orderBody('reseller-d-classic', org.orgId, 'ACME-H-1'), { nowSeconds: signedAt })).status).toBe(200);
    const after = await refusedWith(org, 'reseller-d-classic', orderBody('reseller-d-classic', org.orgId, 'ACME-H-2'), { nowSeconds: signedAt },
      { status: 401, error: 'this signature was already used with another body: replay refused' });
    expect(after).toMatchObject({ lastRefusalReason: 'signed value replayed', refused24h: 1, verified24h: 1 });
  });

  test('body too large (a per-organisation path; a shared route\'s names nobody)', async () => {
    const org = await seedWebhookOrg(h);
    const pad = (body: Buffer) => Buffer.concat([body, Buffer.from(`&pad=${'x'.repeat(1024 * 1024)}`)]);
    const after = await refusedWith(org, 'cart-e', pad(orderBody('cart-e', org.orgId)), {}, { status: 413, error: /./ });
    expect(after).toMatchObject({ lastRefusalReason: 'body too large', refused24h: 1 });
    expect((await send(h.app, 'payments-c', org.orgId, pad(orderBody('payments-c', org.orgId)))).status).toBe(413);
    expect(await health(org.apiKey, 'payments-c')).toEqual(NONE);
  });

  test('body unreadable: verified, then not readable (400)', async () => {
    const org = await seedWebhookOrg(h);
    const after = await refusedWith(org, 'storefront-a', Buffer.from('{"id": 1, "line_items": "none"}'), {}, { status: 400, error: /line_items/ });
    expect(after).toMatchObject({ lastRefusalReason: 'body unreadable', refused24h: 1, verified24h: 0 });
    expect(await refusedWith(org, 'reseller-d', Buffer.from('not json'), {}, { status: 400, error: /./ }))
      .toMatchObject({ lastRefusalReason: 'body unreadable', refused24h: 1 });
  });

  test('the last refusal wins the reason; the counts add up', async () => {
    const org = await seedWebhookOrg(h);
    await send(h.app, 'storefront-a', org.orgId, sample('storefront-a'), { unsigned: true });
    await send(h.app, 'storefront-a', org.orgId, sample('storefront-a'), { secrets: { secret: 'wrong-secret' } });
    expect((await send(h.app, 'storefront-a', org.orgId, orderBody('storefront-a', org.orgId, nextOrder()))).status).toBe(200);
    expect(await health(org.apiKey, 'storefront-a')).toMatchObject({ lastRefusalReason: 'signature mismatch', refused24h: 2, verified24h: 1 });
  });
});

test('on the shared route a refusal counts only when one organisation could be meant', async () => {
  const named = await seedWebhookOrg(h, { platforms: [] });
  const registered = await seedWebhookOrg(h, { platforms: [] });
  const account = `acct_health_${nextOrder()}`;
  await configureIntegration(h, named.orgId, 'payments-c');
  await configureIntegration(h, registered.orgId, 'payments-c', { secret: 'whsec_registered_0123456789', accountId: account });
  // Names one organisation in its metadata and comes from an account another registered: two candidates.
  const body = edit(orderBody('payments-c', named.orgId), '"object": "event",', `"object": "event",\n  "account": "${account}",`);
  const res = await send(h.app, 'payments-c', named.orgId, body, { secrets: { secret: 'whsec_nobody_0123456789' } });
  expect(res).toEqual({ status: 401, body: { error: 'invalid or missing signature' } });
  expect(await health(named.apiKey, 'payments-c')).toEqual(NONE);
  expect(await health(registered.apiKey, 'payments-c')).toEqual(NONE);
  // Either one verifies it: counted for that one.
  expect((await send(h.app, 'payments-c', named.orgId, body)).status).toBe(200);
  expect(await health(named.apiKey, 'payments-c')).toMatchObject({ verified24h: 1, refused24h: 0 });
  expect(await health(registered.apiKey, 'payments-c')).toEqual(NONE);
});

test('a refusal for an organisation that does not exist (a well-formed path id) is dropped, not an error', async () => {
  const nobody = '00000000-0000-4000-8000-000000000000';
  await expect(recordRefusal(h.orm.em.fork(), { orgId: nobody, platform: 'cart-e', reason: 'body too large', at: new Date() })).resolves.toBeUndefined();
  expect(await h.orm.em.fork().count(IntegrationHealth, { organisation: nobody })).toBe(0);
});

test('the counts cover the last 24 hours; the last times stay', async () => {
  const org = await seedWebhookOrg(h, { platforms: ['storefront-a'] });
  const first = Date.now();
  expect((await send(h.app, 'storefront-a', org.orgId, orderBody('storefront-a', org.orgId, nextOrder()))).status).toBe(200);
  await send(h.app, 'storefront-a', org.orgId, sample('storefront-a'), { unsigned: true });
  clockOffsetMs = 23 * HOUR;
  expect(await health(org.apiKey, 'storefront-a')).toMatchObject({ verified24h: 1, refused24h: 1 });
  clockOffsetMs = 25 * HOUR;
  expect(await health(org.apiKey, 'storefront-a')).toMatchObject({
    lastVerifiedAt: between(first, Date.now()), lastRefusalReason: 'signature header missing', verified24h: 0, refused24h: 0,
  });
  // A day later the same hour's slot starts again from nothing.
  clockOffsetMs = 24 * HOUR;
  expect((await send(h.app, 'storefront-a', org.orgId, orderBody('storefront-a', org.orgId, nextOrder()))).status).toBe(200);
  const later = await health(org.apiKey, 'storefront-a');
  expect(later).toMatchObject({ verified24h: 1, refused24h: 0 });
  expect(Date.parse(later.lastVerifiedAt!)).toBeGreaterThan(first + 23 * HOUR);
});

test('the Integrations page shows each platform\'s health, and "no deliveries yet" before any', async () => {
  const org = await seedWebhookOrg(h);
  expect((await send(h.app, 'storefront-a', org.orgId, orderBody('storefront-a', org.orgId, nextOrder()))).status).toBe(200);
  await send(h.app, 'storefront-a', org.orgId, sample('storefront-a'), { secrets: { secret: 'wrong-secret' } });
  const admin = await seedUser(h, org.orgId, 'admin');
  const { cookie } = await signIn(h.app, admin.email);
  const page = await h.app.inject({ method: 'GET', url: '/settings/integrations', headers: { cookie } });
  expect(page.statusCode).toBe(200);
  const panel = (platform: Platform) => new RegExp(`<section[^>]*data-platform="${platform}">([\\s\\S]*?)</section>`).exec(page.body)![1];
  const storefront = panel('storefront-a');
  expect(storefront).toMatch(/Last verified delivery<\/dt><dd data-health="last-verified"><time datetime="[^"]+">/);
  expect(storefront).toMatch(/data-health="last-refused"><time[^>]*>[^<]+<\/time> <span class="badge badge-error">signature mismatch<\/span>/);
  expect(storefront).toContain('data-health="counts">1 verified, 1 refused');
  expect(panel('plugin-b')).toContain('no deliveries yet');
  expect(panel('plugin-b')).not.toContain('data-health');
});
