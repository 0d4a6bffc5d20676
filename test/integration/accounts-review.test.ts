/**
 * The findings of the security review of issue 23, one describe each: every test here failed on
 * the code before its fix.
 */
import { randomUUID } from 'node:crypto';
import { startHarness, type Harness } from '../helpers/harness';
import { cookieHeader, postSignin, signIn, signinForm } from '../helpers/dashboard';
import { seedPurchase } from '../helpers/download-links';
import { seedOrganisation, seedProduct, seedUser } from '../helpers/seed';
import { MAX_CONCURRENT_PASSWORD_HASHES, OWASP_SCRYPT_COST, passwordHashSlots } from '../../src/security/password-hashing';
import { SIGNIN_LIMITS } from '../../src/http/routes/dashboard/signin';
import { BACKLOG_MAX_AGE_MS } from '../../src/http/metrics';
import { STAFF_MAIL_LIMIT } from '../../src/services/staff-mail-limit';

let h: Harness;
let org: { orgId: string; apiKey: string };
/** The app's clock runs this far ahead of the real one. */
let clockAheadMs = 0;

beforeAll(async () => {
  // The service's own scrypt cost: the sign-in limits below hold while a hash takes its real time.
  h = await startHarness({ worker: false, clock: () => new Date(Date.now() + clockAheadMs), env: { PASSWORD_SCRYPT_N: String(OWASP_SCRYPT_COST.N) } });
  org = await seedOrganisation(h);
});
afterAll(() => h?.close());

describe('M5. failed sign-ins cannot starve the thread pool', () => {
  test('with every password-hashing place taken, a sign-in is refused 503 with Retry-After before any hashing; '
    + 'once one is free it signs in', async () => {
    const user = await seedUser(h, org.orgId, 'member');
    const held = Array.from({ length: MAX_CONCURRENT_PASSWORD_HASHES }, () => passwordHashSlots.tryEnter());
    try {
      expect(held.every((release) => release !== null)).toBe(true);
      const refused = await postSignin(h.app, user.email, 'correct horse battery', {}, '192.0.2.31');
      expect(refused.statusCode).toBe(503);
      expect(refused.headers['retry-after']).toBe('1');
    } finally {
      held.forEach((release) => release?.());
    }
    expect((await postSignin(h.app, user.email, 'correct horse battery', {}, '192.0.2.31')).statusCode).toBe(303);
  });

  test('one sign-in at a time per address: a second one meanwhile is 429 with Retry-After, another address is not held up', async () => {
    const user = await seedUser(h, org.orgId, 'member');
    const forms = await Promise.all([signinForm(h.app), signinForm(h.app), signinForm(h.app)]);
    const post = (form: (typeof forms)[number], remoteAddress: string) => h.app.inject({
      method: 'POST', url: '/signin', remoteAddress,
      headers: { cookie: cookieHeader(form.jar), 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ email: user.email, password: 'wrong password', _csrf: form.token }).toString(),
    });
    const [first, second, elsewhere] = await Promise.all([
      post(forms[0], '2001:db8:5:6::1'), post(forms[1], '2001:db8:5:6::2'), post(forms[2], '2001:db8:5:7::1'),
    ]);
    // The two of one /64: one was checked (401), the other refused at once.
    expect([first.statusCode, second.statusCode].sort()).toEqual([401, 429]);
    expect([first, second].find((res) => res.statusCode === 429)!.headers['retry-after']).toBe('1');
    expect(elsewhere.statusCode).toBe(401);
  });

  test('a password change checks the current password like a sign-in: one at a time per address, and at most the sign-in\'s attempts', async () => {
    const user = await seedUser(h, org.orgId, 'member');
    const session = await signIn(h.app, user.email);
    const change = (current: string, remoteAddress = '192.0.2.77') => h.app.inject({
      method: 'POST', url: '/settings/password', remoteAddress,
      headers: { cookie: session.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ _csrf: session.csrf, current, password: 'a brand new password', confirm: 'a brand new password' }).toString(),
    });
    // Two at once from one address: one is checked (a wrong password, 400), the other refused at once.
    const both = await Promise.all([change('wrong one'), change('wrong two')]);
    expect(both.map((r) => r.statusCode).sort()).toEqual([400, 429]);
    expect(both.find((r) => r.statusCode === 429)!.headers['retry-after']).toBe('1');
    // Guesses from a stolen session stop where a sign-in's would: the right password is then refused too.
    for (let i = 1; i < SIGNIN_LIMITS.perAccountAndIp; i += 1) expect((await change(`wrong ${i}`)).statusCode).toBe(400);
    const limited = await change('correct horse battery');
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(60);
    expect((await postSignin(h.app, user.email, 'correct horse battery', {}, '192.0.2.78')).statusCode).toBe(303);
  });

  test('IPv6 attempt limits are kept per /64: other addresses of the same /64 share the count', async () => {
    const user = await seedUser(h, org.orgId, 'member');
    for (let i = 0; i < SIGNIN_LIMITS.perAccountAndIp; i += 1) {
      expect((await postSignin(h.app, user.email, `wrong ${i}`, {}, `2001:db8:7:8::${(i + 1).toString(16)}`)).statusCode).toBe(401);
    }
    // Past the limit: the right password from yet another address of that /64 is "incorrect".
    expect((await postSignin(h.app, user.email, 'correct horse battery', {}, '2001:db8:7:8:ffff::1')).statusCode).toBe(401);
    expect((await postSignin(h.app, user.email, 'correct horse battery', {}, '2001:db8:7:9::1')).statusCode).toBe(303);
  });
});

describe('L4. /readyz cannot be made to count the outbox at will', () => {
  test('/readyz reads the outbox backlog at most once per BACKLOG_MAX_AGE_MS, however often it is asked', async () => {
    const waiting = async () => {
      const res = await h.app.inject({ method: 'GET', url: '/readyz' });
      expect(res.statusCode).toBe(200);
      return (res.json() as { outbox: { waiting: number } }).outbox.waiting;
    };
    clockAheadMs += BACKLOG_MAX_AGE_MS;
    const before = await waiting();
    // A start due tomorrow: the dispatcher leaves it where it is.
    const id = randomUUID();
    await h.orm.em.fork().execute(
      `insert into workflow_dispatch (id, kind, workflow_id, payload, created_at, due_at) values (?, 'test', ?, '{}', now(), now() + interval '1 day')`,
      [id, `test/${id}`],
    );
    try {
      expect(await waiting()).toBe(before);
      clockAheadMs += BACKLOG_MAX_AGE_MS;
      expect(await waiting()).toBe(before + 1);
    } finally {
      await h.orm.em.fork().execute('delete from workflow_dispatch where id = ?', [id]);
    }
  });
});

describe('L5. what members may do to limits and see of buyers; staff mail per purchase; limit changes logged', () => {
  const json = (headers: Record<string, string>) => ({ ...headers, 'content-type': 'application/json' });
  const bearer = (apiKey: string) => ({ authorization: `Bearer ${apiKey}` });

  test('a member cannot change a product\'s download limit (a form sending it back unchanged is fine); an admin can', async () => {
    const member = await seedUser(h, org.orgId, 'member');
    const admin = await seedUser(h, org.orgId, 'admin');
    const { productId } = await seedProduct(h, org.orgId);
    const put = (apiKey: string, body: object) => h.app.inject({
      method: 'PUT', url: `/api/products/${productId}`, headers: json(bearer(apiKey)), payload: JSON.stringify(body),
    });
    expect((await put(admin.apiKey, { downloadLimit: 3 })).statusCode).toBe(200);
    const lifted = await put(member.apiKey, { downloadLimit: null });
    expect(lifted.statusCode).toBe(403);
    expect((await put(member.apiKey, { downloadLimit: 30 })).statusCode).toBe(403);
    const unchanged = await put(member.apiKey, { downloadLimit: 3, description: 'Now with exercises' });
    expect(unchanged.statusCode).toBe(200);
    expect(unchanged.json()).toMatchObject({ downloadLimit: 3, description: 'Now with exercises' });
    expect((await put(admin.apiKey, { downloadLimit: null })).json()).toMatchObject({ downloadLimit: null });
  });

  test('the purchase page shows the buyer\'s IP address to owners and admins only', async () => {
    const member = await seedUser(h, org.orgId, 'member');
    const admin = await seedUser(h, org.orgId, 'admin');
    const product = await seedProduct(h, org.orgId);
    const { purchaseId, token } = await seedPurchase(h, org.orgId, product);
    expect((await h.app.inject({ method: 'GET', url: `/d/${token}`, remoteAddress: '203.0.113.77' })).statusCode).toBe(200);
    const page = async (email: string) => {
      const { cookie } = await signIn(h.app, email);
      const res = await h.app.inject({ method: 'GET', url: `/purchases/${purchaseId}`, headers: { cookie } });
      expect(res.statusCode).toBe(200);
      return res.body;
    };
    expect(await page(admin.email)).toContain('203.0.113.77');
    const seenByMember = await page(member.email);
    expect(seenByMember).toContain('data-testid="accesses"');
    expect(seenByMember).not.toContain('203.0.113.77');
    expect(seenByMember).not.toContain('<th scope="col">IP</th>');
  });

  test(`staff email a buyer by hand at most ${STAFF_MAIL_LIMIT.perPurchase} times per purchase and hour (re-arm and resend together), `
    + 'then 429 with Retry-After', async () => {
    const admin = await seedUser(h, org.orgId, 'admin');
    const member = await seedUser(h, org.orgId, 'member');
    const product = await seedProduct(h, org.orgId);
    const { purchaseId } = await seedPurchase(h, org.orgId, product);
    const rearm = () => h.app.inject({ method: 'POST', url: `/api/purchases/${purchaseId}/rearm`, headers: bearer(admin.apiKey) });
    for (let i = 0; i < STAFF_MAIL_LIMIT.perPurchase; i += 1) expect((await rearm()).statusCode).toBe(200);
    const refused = await rearm();
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    const { cookie, csrf } = await signIn(h.app, member.email);
    const resend = await h.app.inject({
      method: 'POST', url: `/purchases/${purchaseId}/resend`,
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ _csrf: csrf }).toString(),
    });
    expect(resend.statusCode).toBe(429);
    // Another purchase is not held up.
    const other = await seedPurchase(h, org.orgId, product);
    expect((await h.app.inject({ method: 'POST', url: `/api/purchases/${other.purchaseId}/rearm`, headers: bearer(admin.apiKey) })).statusCode).toBe(200);
  });

  test('a re-arm that sends nothing (another organisation\'s purchase, a revoked one) uses none of the purchase\'s emails', async () => {
    const admin = await seedUser(h, org.orgId, 'admin');
    const product = await seedProduct(h, org.orgId);
    const { purchaseId } = await seedPurchase(h, org.orgId, product);
    const stranger = await seedUser(h, (await seedOrganisation(h)).orgId, 'admin');
    const rearm = (apiKey: string) => h.app.inject({ method: 'POST', url: `/api/purchases/${purchaseId}/rearm`, headers: bearer(apiKey) });
    for (let i = 0; i < STAFF_MAIL_LIMIT.perPurchase; i += 1) expect((await rearm(stranger.apiKey)).statusCode).toBe(404);
    await h.app.inject({ method: 'POST', url: `/api/purchases/${purchaseId}/revoke`, headers: bearer(admin.apiKey) });
    expect((await rearm(admin.apiKey)).statusCode).toBe(409);
    await h.app.inject({ method: 'POST', url: `/api/purchases/${purchaseId}/restore`, headers: bearer(admin.apiKey) });
    for (let i = 0; i < STAFF_MAIL_LIMIT.perPurchase; i += 1) expect((await rearm(admin.apiKey)).statusCode).toBe(200);
    expect((await rearm(admin.apiKey)).statusCode).toBe(429);
  });

  test('a purchase\'s download limit change is in its staff-action log, with who and what', async () => {
    const admin = await seedUser(h, org.orgId, 'admin');
    const product = await seedProduct(h, org.orgId);
    const { purchaseId } = await seedPurchase(h, org.orgId, product);
    const set = (downloadLimit: number | null) => h.app.inject({
      method: 'PUT', url: `/api/purchases/${purchaseId}/download-limit`, headers: json(bearer(admin.apiKey)), payload: JSON.stringify({ downloadLimit }),
    });
    expect((await set(7)).statusCode).toBe(200);
    expect((await set(null)).statusCode).toBe(200);
    const evidence = await h.app.inject({ method: 'GET', url: `/api/purchases/${purchaseId}/evidence`, headers: bearer(admin.apiKey) });
    const actions = (evidence.json() as { staffActions: Array<{ action: string; by: string; detail: string }> }).staffActions;
    expect(actions.map(({ action, by, detail }) => ({ action, by, detail }))).toEqual([
      { action: 'download_limit', by: `${admin.email} (API key)`, detail: 'download limit 7 (was the product\'s)' },
      { action: 'download_limit', by: `${admin.email} (API key)`, detail: 'download limit the product\'s (was 7)' },
    ]);
  });
});
