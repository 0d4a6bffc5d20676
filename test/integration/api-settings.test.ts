import { Integration } from '../../src/db/entities';
import { PLATFORMS } from '../../src/domain/platforms';
import { loadKeyRing } from '../../src/security/key-ring';
import { openSecret } from '../../src/security/sealed-secrets';
import { startHarness, type Harness } from '../helpers/harness';
import { seedOrganisation, seedUser } from '../helpers/seed';
import { signIn } from '../helpers/dashboard';

let h: Harness;
let org: { orgId: string; apiKey: string };
let other: { orgId: string; apiKey: string };

beforeAll(async () => {
  h = await startHarness({ worker: false });
  org = await seedOrganisation(h);
  other = await seedOrganisation(h);
});
afterAll(() => h?.close());

const bearer = (apiKey: string) => ({ authorization: `Bearer ${apiKey}` });

function put(platform: string, body: unknown, apiKey = org.apiKey) {
  return h.app.inject({
    method: 'PUT', url: `/api/settings/integrations/${platform}`,
    headers: { ...bearer(apiKey), 'content-type': 'application/json' }, payload: JSON.stringify(body),
  });
}
const list = (apiKey = org.apiKey) => h.app.inject({ method: 'GET', url: '/api/settings/integrations', headers: bearer(apiKey) });
/** The integration row with its secrets opened (they are sealed at rest). */
async function stored(orgId: string, platform: string) {
  const row = await h.orm.em.fork().findOne(Integration, { organisation: orgId, platform: platform as never });
  if (!row) return null;
  const keyRing = await loadKeyRing(h.config);
  const open = (value: string | null) => (value === null ? null : openSecret(keyRing, value));
  return { ...row, secret: open(row.secret), privateKey: open(row.privateKey) };
}

describe('integrations', () => {
  test('every platform, unconfigured, with the URL each must call (the spec\'s six pinned)', async () => {
    const res = await list();
    expect(res.statusCode).toBe(200);
    const body = res.json() as Array<{ platform: string; configured: boolean; webhookUrl: string; note?: string }>;
    expect(body.map((i) => i.platform)).toEqual([...PLATFORMS]);
    expect(body.every((i) => i.configured === false)).toBe(true);
    const url = Object.fromEntries(body.map((i) => [i.platform, i.webhookUrl]));
    expect(url).toMatchObject({
      'storefront-a': `http://delivery.test/webhooks/${org.orgId}/storefront-a`,
      'plugin-b': `http://delivery.test/webhooks/${org.orgId}/plugin-b`,
      'payments-c': 'http://delivery.test/webhooks/payments-c',
      'reseller-d': `http://delivery.test/webhooks/${org.orgId}/reseller-d`,
      'reseller-d-classic': `http://delivery.test/webhooks/${org.orgId}/reseller-d-classic`,
      'cart-e': `http://delivery.test/webhooks/${org.orgId}/cart-e`,
    });
    expect(body.find((i) => i.platform === 'cart-e')?.note).toMatch(/\?secret=/);
  });

  test('PUT sets the secret, answers without it, and the list shows it configured', async () => {
    const res = await put('storefront-a', { secret: 'shpss_very-secret-value' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ platform: 'storefront-a', configured: true, webhookUrl: `http://delivery.test/webhooks/${org.orgId}/storefront-a` });
    expect(res.body).not.toContain('very-secret');
    expect((await stored(org.orgId, 'storefront-a'))?.secret).toBe('shpss_very-secret-value');
    const listed = await list();
    expect(listed.body).not.toContain('very-secret');
    expect(listed.json().find((i: { platform: string }) => i.platform === 'storefront-a').configured).toBe(true);
    // Another organisation's settings are its own.
    expect((await list(other.apiKey)).json().every((i: { configured: boolean }) => !i.configured)).toBe(true);
  });

  test('a second PUT replaces the secret (one row per organisation and platform)', async () => {
    await put('plugin-b', { secret: 'first-secret-value-1' });
    expect((await put('plugin-b', { secret: 'second-secret-value-2' })).statusCode).toBe(200);
    const rows = await h.orm.em.fork().find(Integration, { organisation: org.orgId, platform: 'plugin-b' });
    expect(rows).toHaveLength(1);
    expect((await stored(org.orgId, 'plugin-b'))?.secret).toBe('second-secret-value-2');
  });

  test('reseller-d-classic takes privateKey (secret accepted as the same thing)', async () => {
    expect((await put('reseller-d-classic', { privateKey: 'private-key-value-1' })).statusCode).toBe(200);
    expect(await stored(org.orgId, 'reseller-d-classic')).toMatchObject({ privateKey: 'private-key-value-1', secret: null });
    expect((await put('reseller-d-classic', { secret: 'private-key-value-2' })).statusCode).toBe(200);
    expect(await stored(org.orgId, 'reseller-d-classic')).toMatchObject({ privateKey: 'private-key-value-2', secret: null });
    expect((await list()).json().find((i: { platform: string }) => i.platform === 'reseller-d-classic').configured).toBe(true);
  });

  test.each([
    ['storefront-a', {}, 400],
    ['storefront-a', { secret: '' }, 400],
    ['storefront-a', { secret: '   ' }, 400],
    ['storefront-a', { secret: 42 }, 400],
    ['storefront-a', { secret: ['a'] }, 400],
    ['storefront-a', { secret: 's', privateKey: 'k' }, 400],
    ['storefront-a', { secret: 's', accountId: 'acct_1' }, 400],
    ['reseller-d-classic', {}, 400],
    ['reseller-d-classic', { privateKey: '' }, 400],
    ['cart-e', { secret: 'fifteen-chars-x' }, 400],
    ['reseller-d-classic', { privateKey: 'short' }, 400],
    ['shopify', { secret: 's' }, 404],
    ['download-complete', { secret: 's' }, 404],
    ['STOREFRONT-A', { secret: 's' }, 404],
  ])('PUT %s %j → %i {error}', async (platform, body, status) => {
    const res = await put(platform, body);
    expect(res.statusCode).toBe(status);
    expect(res.json()).toEqual({ error: expect.any(String) });
  });

  test('a body that is not JSON is a clear 4xx', async () => {
    const res = await h.app.inject({
      method: 'PUT', url: '/api/settings/integrations/cart-e', headers: { ...bearer(org.apiKey), 'content-type': 'application/json' }, payload: '{"secret":',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: expect.any(String) });
  });

  test('a payments-c account id is kept as given, whoever else registered it (the signature routes events)', async () => {
    expect((await put('payments-c', { secret: 'whsec_a_0123456789abcdef', accountId: 'acct_shared' })).statusCode).toBe(200);
    expect((await stored(org.orgId, 'payments-c'))?.accountId).toBe('acct_shared');
    // Another organisation is not told that the id is taken.
    expect((await put('payments-c', { secret: 'whsec_b_0123456789abcdef', accountId: 'acct_shared' }, other.apiKey)).statusCode).toBe(200);
    expect((await stored(other.orgId, 'payments-c'))?.accountId).toBe('acct_shared');
    // Without accountId it stays; an empty one removes it.
    expect((await put('payments-c', { secret: 'whsec_a3_0123456789abcdef' })).statusCode).toBe(200);
    expect(await stored(org.orgId, 'payments-c')).toMatchObject({ secret: 'whsec_a3_0123456789abcdef', accountId: 'acct_shared' });
    expect((await put('payments-c', { secret: 'whsec_a3_0123456789abcdef', accountId: '' })).statusCode).toBe(200);
    expect((await stored(org.orgId, 'payments-c'))?.accountId).toBeNull();
  });

  test('an admin may configure too', async () => {
    const admin = await seedUser(h, org.orgId, 'admin');
    expect((await put('reseller-d', { secret: 'reseller-d-secret-0123' }, admin.apiKey)).statusCode).toBe(200);
  });
});

describe('API key', () => {
  const purchases = (headers: Record<string, string>) => h.app.inject({ method: 'GET', url: '/api/purchases', headers });

  test('refresh mints a new key; the old one fails at once and the new one works', async () => {
    const user = await seedUser(h, org.orgId, 'member');
    const bystander = await seedUser(h, org.orgId, 'member');
    expect((await purchases(bearer(user.apiKey))).statusCode).toBe(200);

    const res = await h.app.inject({ method: 'POST', url: '/api/settings/api-key/refresh', headers: bearer(user.apiKey) });
    expect(res.statusCode).toBe(200);
    const { apiKey } = res.json() as { apiKey: string };
    expect(apiKey).not.toBe(user.apiKey);
    expect(apiKey.length).toBeGreaterThanOrEqual(40);

    const old = await purchases(bearer(user.apiKey));
    expect(old.statusCode).toBe(401);
    expect(old.json()).toEqual({ error: expect.any(String) });
    expect((await purchases({ 'x-api-key': user.apiKey })).statusCode).toBe(401);
    expect((await purchases(bearer(apiKey))).statusCode).toBe(200);
    expect((await purchases({ 'x-api-key': apiKey })).statusCode).toBe(200);
    // Only the caller's own key changed.
    expect((await purchases(bearer(bystander.apiKey))).statusCode).toBe(200);

    const info = await h.app.inject({ method: 'GET', url: '/api/settings/api-key', headers: bearer(apiKey) });
    expect(info.statusCode).toBe(200);
    expect(Object.keys(info.json()).sort()).toEqual(['lastUsedAt', 'prefix']);
    expect(apiKey.startsWith(info.json().prefix)).toBe(true);
    expect(info.body).not.toContain(apiKey);
  });

  test('the API Key page shows when the key was last used', async () => {
    const user = await seedUser(h, org.orgId, 'admin');
    const headers = bearer(user.apiKey);
    await purchases(headers);
    // The last-used stamp is written off the request path: wait until it lands.
    let lastUsedAt: string | null = null;
    for (let i = 0; i < 50 && !lastUsedAt; i++) {
      lastUsedAt = (await h.app.inject({ method: 'GET', url: '/api/settings/api-key', headers })).json().lastUsedAt;
      if (!lastUsedAt) await new Promise((r) => setTimeout(r, 100));
    }
    expect(lastUsedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  test('many requests at once with one key write its last use once, not once each (they would queue on the row)', async () => {
    const user = await seedUser(h, org.orgId, 'admin');
    const em = h.orm.em.fork();
    // Counts the writes to this user's last-use column as PostgreSQL carries them out.
    await em.execute(`create table if not exists test_key_use_writes (user_id uuid not null)`);
    await em.execute(`create or replace function test_count_key_use() returns trigger language plpgsql as
      $$ begin insert into test_key_use_writes values (new.id); return new; end $$`);
    await em.execute(`create or replace trigger test_key_use after update of api_key_last_used_at on app_user
      for each row execute function test_count_key_use()`);
    const writes = async () => Number((await em.execute('select count(*)::int as n from test_key_use_writes where user_id = ?', [user.userId]))[0].n);

    const answers = await Promise.all(Array.from({ length: 30 }, () => purchases(bearer(user.apiKey))));
    expect(answers.every((a) => a.statusCode === 200)).toBe(true);
    // The write is off the request path: give every one that was started time to land.
    for (let i = 0; i < 20; i++) {
      expect(await writes()).toBeLessThanOrEqual(1);
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(await writes()).toBe(1);

    // A refreshed key is a new key: its first use is written too.
    const { apiKey } = (await h.app.inject({ method: 'POST', url: '/api/settings/api-key/refresh', headers: bearer(user.apiKey) })).json() as { apiKey: string };
    await purchases(bearer(apiKey));
    for (let i = 0; i < 50 && (await writes()) < 3; i++) await new Promise((r) => setTimeout(r, 50));
    // The refresh clears the stamp (a write), the new key's first use sets it.
    expect(await writes()).toBe(3);
    await em.execute('drop trigger test_key_use on app_user');
  });
});

describe('the buyer reminder\'s delay (decisions §16)', () => {
  const putOrganisation = (body: unknown, apiKey: string) => h.app.inject({
    method: 'PUT', url: '/api/settings/organisation', headers: { ...bearer(apiKey), 'content-type': 'application/json' }, payload: JSON.stringify(body),
  });
  const getOrganisation = (apiKey: string) => h.app.inject({ method: 'GET', url: '/api/settings/organisation', headers: bearer(apiKey) });

  test('a day by default; owners and admins set whole minutes or null (off); other fields stay as they are', async () => {
    const fresh = await seedOrganisation(h);
    expect((await getOrganisation(fresh.apiKey)).json()).toMatchObject({ reminderAfterMinutes: 1440, supportEmail: null });
    await putOrganisation({ supportEmail: 'help@example.com' }, fresh.apiKey);

    const admin = await seedUser(h, fresh.orgId, 'admin');
    const set = await putOrganisation({ reminderAfterMinutes: 4320 }, admin.apiKey);
    expect(set.statusCode).toBe(200);
    expect(set.json()).toMatchObject({ reminderAfterMinutes: 4320, supportEmail: 'help@example.com' });
    expect((await putOrganisation({ reminderAfterMinutes: null }, fresh.apiKey)).json().reminderAfterMinutes).toBeNull();
    expect((await getOrganisation(fresh.apiKey)).json()).toMatchObject({ reminderAfterMinutes: null, supportEmail: 'help@example.com' });
    // Absent: unchanged.
    expect((await putOrganisation({ supportEmail: null }, fresh.apiKey)).json()).toMatchObject({ reminderAfterMinutes: null, supportEmail: null });
    expect((await putOrganisation({ reminderAfterMinutes: 1 }, fresh.apiKey)).json().reminderAfterMinutes).toBe(1);
    expect((await putOrganisation({ reminderAfterMinutes: 525_600 }, fresh.apiKey)).json().reminderAfterMinutes).toBe(525_600);
    // Another organisation keeps its own.
    expect((await getOrganisation(other.apiKey)).json().reminderAfterMinutes).toBe(1440);

    const member = await seedUser(h, fresh.orgId, 'member');
    expect((await putOrganisation({ reminderAfterMinutes: 60 }, member.apiKey)).statusCode).toBe(403);
  });

  test.each([
    [0, /whole number of minutes from 1 to 525600/],
    [525_601, /whole number of minutes from 1 to 525600/],
    [1.5, /whole number of minutes/],
    ['60', /or null to turn reminders off/],
    [true, /or null to turn reminders off/],
  ])('%p is a 400 that says what is wanted, and changes nothing', async (value, message) => {
    const before = (await getOrganisation(org.apiKey)).json().reminderAfterMinutes;
    const res = await putOrganisation({ reminderAfterMinutes: value, supportEmail: 'changed@example.com' }, org.apiKey);
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatch(/^reminderAfterMinutes: /);
    expect(res.json().error).toMatch(message);
    expect((await getOrganisation(org.apiKey)).json()).toMatchObject({ reminderAfterMinutes: before, supportEmail: null });
  });

  test('Settings › Organisation shows it and saves it from its own form; empty turns reminders off', async () => {
    const fresh = await seedOrganisation(h);
    const session = await signIn(h.app, (await seedUser(h, fresh.orgId, 'admin')).email);
    const page = await h.app.inject({ method: 'GET', url: '/settings/organisation', headers: { cookie: session.cookie } });
    expect(page.body).toMatch(/data-testid="reminder-after">Now: <strong>24 hours<\/strong> after the receipt/);
    expect(page.body).toContain('name="reminderAfterMinutes"');
    const post = (value: string) => h.app.inject({
      method: 'POST', url: '/settings/organisation/reminders',
      headers: { cookie: session.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ _csrf: session.csrf, reminderAfterMinutes: value }).toString(),
    });
    expect((await post('60')).statusCode).toBe(303);
    expect((await getOrganisation(fresh.apiKey)).json().reminderAfterMinutes).toBe(60);
    const refused = await post('0');
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('reminderAfterMinutes: must be a whole number of minutes from 1 to 525600');
    expect((await post('')).statusCode).toBe(303);
    expect((await getOrganisation(fresh.apiKey)).json().reminderAfterMinutes).toBeNull();
    const off = await h.app.inject({ method: 'GET', url: '/settings/organisation', headers: { cookie: session.cookie } });
    expect(off.body).toMatch(/data-testid="reminder-after">Now: <span class="muted">off<\/span>/);
  });
});
