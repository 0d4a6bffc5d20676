import { startHarness, type Harness } from '../helpers/harness';
import { seedOrganisation, seedProduct, seedUser } from '../helpers/seed';
import { SIGNIN_LIMITS } from '../../src/http/routes/dashboard/signin';
import { cookieHeader, cookiesOf, postSignin, signIn, signinForm } from '../helpers/dashboard';
import { SESSION_TTL_MS } from '../../src/http/plugins/session';

let h: Harness;
let org: { orgId: string; userId: string; apiKey: string };
let ownerEmail: string;
/** The harness's clock: moved forward to expire sessions. */
let offsetMs = 0;

beforeAll(async () => {
  h = await startHarness({ clock: () => new Date(Date.now() + offsetMs) });
  org = await seedOrganisation(h);
  const rows = await h.orm.em.fork().execute<Array<{ email: string }>>('select email from app_user where id = ?', [org.userId]);
  ownerEmail = rows[0].email;
});
afterAll(() => h?.close());

describe('sign-in', () => {
  test('signed out, / leads to the sign-in form with fields labelled Email and Password', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/' });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/signin?next=%2F');
    const form = await h.app.inject({ method: 'GET', url: res.headers.location as string });
    expect(form.statusCode).toBe(200);
    expect(form.body).toMatch(/<label for="email">Email<\/label>/);
    expect(form.body).toMatch(/<label for="password">Password<\/label>/);
  });

  test('a right password starts a signed, HttpOnly, SameSite=Lax session and goes to next', async () => {
    const res = await postSignin(h.app, ownerEmail.toUpperCase(), 'correct horse battery', { next: '/products' });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/products');
    const setCookie = String(res.headers['set-cookie']);
    expect(setCookie).toMatch(/dlv_session=[^;]+;/);
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Lax/);
    const page = await h.app.inject({ method: 'GET', url: '/', headers: { cookie: cookieHeader(cookiesOf(res)) } });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<h1>Overview</h1>');
  });

  test('next never leaves the site', async () => {
    const res = await postSignin(h.app, ownerEmail, 'correct horse battery', { next: '//evil.example/x' });
    expect(res.headers.location).toBe('/');
  });

  /** The alert of the sign-in page. */
  const message = (body: string) => /role="alert"[^>]*>([^<]+)</.exec(body)?.[1];

  test('a wrong password and an unknown account get the same answer', async () => {
    const wrong = await postSignin(h.app, ownerEmail, 'not the password');
    const unknown = await postSignin(h.app, 'nobody-here@example.com', 'not the password');
    expect(wrong.statusCode).toBe(401);
    expect(unknown.statusCode).toBe(401);
    expect(message(wrong.body)).toBe('Email or password is incorrect.');
    expect(message(unknown.body)).toBe(message(wrong.body));
    expect(cookiesOf(wrong).dlv_session).toBeUndefined();
  });

  test('the sign-in form needs its own token (login CSRF)', async () => {
    const { jar } = await signinForm(h.app);
    const res = await h.app.inject({
      method: 'POST', url: '/signin',
      headers: { cookie: cookieHeader(jar), 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ email: ownerEmail, password: 'correct horse battery', _csrf: 'forged' }).toString(),
    });
    expect(res.statusCode).toBe(403);
    expect(cookiesOf(res).dlv_session).toBeUndefined();
  });

  test('too many attempts for one account from one address → the same "incorrect" after a delay, even with the right password; '
    + 'the account still signs in from elsewhere, and other accounts from here', async () => {
    const member = await seedUser(h, org.orgId, 'member');
    const attacker = '198.51.100.66';
    for (let i = 0; i < SIGNIN_LIMITS.perAccountAndIp; i += 1) {
      expect((await postSignin(h.app, member.email, `wrong ${i}`, {}, attacker)).statusCode).toBe(401);
    }
    const started = Date.now();
    const limited = await postSignin(h.app, member.email, 'correct horse battery', {}, attacker);
    expect(limited.statusCode).toBe(401);
    expect(Date.now() - started).toBeGreaterThanOrEqual(SIGNIN_LIMITS.refusedDelayMs);
    expect(message(limited.body)).toBe('Email or password is incorrect.');
    expect(cookiesOf(limited).dlv_session).toBeUndefined();
    // The user, from their own address, is not locked out by the attacker's guesses.
    expect((await postSignin(h.app, member.email, 'correct horse battery', {}, '203.0.113.10')).statusCode).toBe(303);
    expect((await postSignin(h.app, ownerEmail, 'correct horse battery', {}, attacker)).statusCode).toBe(303);
  });

  test('a tampered session cookie is no session', async () => {
    const { cookie } = await signIn(h.app, ownerEmail);
    const tampered = cookie.replace(/dlv_session=([^.;]+)/, (_m, userId: string) => `dlv_session=${userId.replace(/.$/, (c) => (c === 'a' ? 'b' : 'a'))}`);
    expect(tampered).not.toBe(cookie);
    const res = await h.app.inject({ method: 'GET', url: '/', headers: { cookie: tampered } });
    expect(res.statusCode).toBe(303);
  });

  test('sign-out needs the CSRF token, then ends the session', async () => {
    const { cookie, csrf } = await signIn(h.app, ownerEmail);
    const form = (fields: Record<string, string>) => ({
      method: 'POST' as const, url: '/signout',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams(fields).toString(),
    });
    expect((await h.app.inject(form({}))).statusCode).toBe(403);
    const out = await h.app.inject(form({ _csrf: csrf }));
    expect(out.statusCode).toBe(303);
    expect(String(out.headers['set-cookie'])).toMatch(/dlv_session=;/);
  });
});

describe('CSRF on session-authenticated API calls', () => {
  const sale = { customerId: 'new', 'newCustomer.email': 'csrf@example.com', productId: '00000000-0000-4000-8000-000000000000', amount: '1', currency: 'USD' };
  const post = (headers: Record<string, string>) => h.app.inject({
    method: 'POST', url: '/api/purchases',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    payload: new URLSearchParams(sale).toString(),
  });

  test('a session without the X-CSRF-Token header is refused with 403 before anything else', async () => {
    const { cookie } = await signIn(h.app, ownerEmail);
    const res = await post({ cookie });
    expect(res.statusCode).toBe(403);
    expect(res.body).toContain('CSRF');
    expect((await post({ cookie, 'x-csrf-token': 'wrong' })).statusCode).toBe(403);
  });

  test('with the session token it gets through to the route (404: no such product)', async () => {
    const { cookie, csrf } = await signIn(h.app, ownerEmail);
    expect((await post({ cookie, 'x-csrf-token': csrf })).statusCode).toBe(404);
  });

  test('an API key needs no CSRF token, and GET with a session needs none either', async () => {
    expect((await post({ authorization: `Bearer ${org.apiKey}` })).statusCode).toBe(404);
    const { cookie } = await signIn(h.app, ownerEmail);
    const products = await h.app.inject({ method: 'GET', url: '/api/products', headers: { cookie } });
    expect(products.statusCode).toBe(200);
  });

  test('a token of another session does not fit', async () => {
    const a = await signIn(h.app, ownerEmail);
    const b = await signIn(h.app, ownerEmail);
    expect(a.csrf).not.toBe(b.csrf);
    expect((await post({ cookie: a.cookie, 'x-csrf-token': b.csrf })).statusCode).toBe(403);
  });
});

describe('roles are enforced on the server', () => {
  let member: { email: string };
  let admin: { email: string };
  beforeAll(async () => {
    member = await seedUser(h, org.orgId, 'member');
    admin = await seedUser(h, org.orgId, 'admin');
  });

  const get = (cookie: string, url: string) => h.app.inject({ method: 'GET', url, headers: { cookie } });

  test('a member gets 403 pages for organisation settings and reports, and no link to them', async () => {
    const { cookie } = await signIn(h.app, member.email);
    for (const url of ['/settings/integrations', '/settings/team', '/reports']) {
      const res = await get(cookie, url);
      expect({ url, status: res.statusCode }).toEqual({ url, status: 403 });
      expect(res.headers['content-type']).toMatch(/text\/html/);
      expect(res.body).toContain('only owners and admins');
    }
    const settings = await get(cookie, '/settings/api-key');
    expect(settings.statusCode).toBe(200);
    expect(settings.body).not.toContain('href="/settings/team"');
    expect(settings.body).not.toContain('href="/reports"');
    for (const url of ['/', '/products', '/purchases', '/customers', '/webhooks-log', '/settings/password']) {
      expect({ url, status: (await get(cookie, url)).statusCode }).toEqual({ url, status: 200 });
    }
  });

  test('a member cannot add people or set roles, even with a valid CSRF token', async () => {
    const { cookie, csrf } = await signIn(h.app, member.email);
    const res = await h.app.inject({
      method: 'POST', url: '/settings/team',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ _csrf: csrf, email: 'sneaky@example.com', role: 'owner', password: 'long enough pw' }).toString(),
    });
    expect(res.statusCode).toBe(403);
    const rows = await h.orm.em.fork().execute('select 1 from app_user where email = ?', ['sneaky@example.com']);
    expect(rows).toHaveLength(0);
  });

  test('an admin sees the organisation settings, and cannot make owners', async () => {
    const { cookie, csrf } = await signIn(h.app, admin.email);
    for (const url of ['/settings/integrations', '/settings/team', '/reports']) {
      expect({ url, status: (await get(cookie, url)).statusCode }).toEqual({ url, status: 200 });
    }
    const res = await h.app.inject({
      method: 'POST', url: `/settings/team/${org.userId}/role`,
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ _csrf: csrf, role: 'member' }).toString(),
    });
    expect(res.statusCode).toBe(403);
  });

  const form = (cookie: string, url: string, fields: Record<string, string>) => h.app.inject({
    method: 'POST', url, headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams(fields).toString(),
  });

  test('someone who left is removed: their session and API key stop at once; members cannot remove, admins not owners, nobody themselves', async () => {
    const leaver = await seedUser(h, org.orgId, 'member');
    const theirs = await signIn(h.app, leaver.email);
    const owner = await signIn(h.app, ownerEmail);
    const adminSession = await signIn(h.app, admin.email);
    const memberSession = await signIn(h.app, member.email);
    expect((await get(owner.cookie, '/settings/team')).body).toContain(`hx-post="/settings/team/${leaver.userId}/remove"`);

    expect((await form(memberSession.cookie, `/settings/team/${leaver.userId}/remove`, { _csrf: memberSession.csrf })).statusCode).toBe(403);
    expect((await form(adminSession.cookie, `/settings/team/${org.userId}/remove`, { _csrf: adminSession.csrf })).statusCode).toBe(403);
    expect((await form(owner.cookie, `/settings/team/${org.userId}/remove`, { _csrf: owner.csrf })).statusCode).toBe(403);
    expect((await form(owner.cookie, '/settings/team/not-a-uuid/remove', { _csrf: owner.csrf })).statusCode).toBe(404);
    const stranger = await seedOrganisation(h);
    expect((await form(owner.cookie, `/settings/team/${stranger.userId}/remove`, { _csrf: owner.csrf })).statusCode).toBe(404);

    const removed = await form(adminSession.cookie, `/settings/team/${leaver.userId}/remove`, { _csrf: adminSession.csrf });
    expect(removed.statusCode).toBe(200);
    expect(removed.body).toContain('Removed');
    expect((await get(theirs.cookie, '/')).statusCode).toBe(303);
    expect((await h.app.inject({ method: 'GET', url: '/api/products', headers: { authorization: `Bearer ${leaver.apiKey}` } })).statusCode).toBe(401);
    expect((await postSignin(h.app, leaver.email, 'correct horse battery')).statusCode).toBe(401);
    expect((await get(owner.cookie, '/settings/team')).body).not.toContain(leaver.email);
  });

  test('a role change or removal is judged by the actor\'s role once the organisation is locked, not as read before', async () => {
    const demoted = await seedUser(h, org.orgId, 'admin');
    const target = await seedUser(h, org.orgId, 'member');
    const session = await signIn(h.app, demoted.email);
    // The admin's request is read as an admin's; a change committed while it waits for the lock makes them a member.
    const locker = h.orm.em.fork();
    await locker.begin();
    await locker.execute('select 1 from organisation where id = ? for update', [org.orgId]);
    await locker.execute('update app_user set role = ? where id = ?', ['member', demoted.userId]);
    const pending = [
      form(session.cookie, `/settings/team/${target.userId}/role`, { _csrf: session.csrf, role: 'admin' }),
      form(session.cookie, `/settings/team/${target.userId}/remove`, { _csrf: session.csrf }),
    ];
    await new Promise((r) => setTimeout(r, 300));
    await locker.commit();
    expect((await Promise.all(pending)).map((r) => r.statusCode)).toEqual([403, 403]);
    expect(await h.orm.em.fork().execute('select role from app_user where id = ?', [target.userId])).toEqual([{ role: 'member' }]);
  });

  test('a dashboard form post without the CSRF token is refused', async () => {
    const { cookie } = await signIn(h.app, ownerEmail);
    const res = await h.app.inject({
      method: 'POST', url: '/products',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ name: 'Forged', slug: 'forged' }).toString(),
    });
    expect(res.statusCode).toBe(403);
    expect(await h.orm.em.fork().execute('select 1 from product where slug = ?', ['forged'])).toHaveLength(0);
  });

  test('another organisation\'s product is not found', async () => {
    const other = await seedOrganisation(h);
    const theirs = await seedProduct(h, other.orgId);
    const { cookie } = await signIn(h.app, ownerEmail);
    expect((await get(cookie, `/products/${theirs.productId}`)).statusCode).toBe(404);
    expect((await get(cookie, '/products/not-a-uuid')).statusCode).toBe(404);
  });
});

describe('sessions end', () => {
  test('changing the password ends every other session, the one that changed it goes on', async () => {
    const user = await seedUser(h, org.orgId, 'member');
    const other = await signIn(h.app, user.email);
    const mine = await signIn(h.app, user.email);
    const change = await h.app.inject({
      method: 'POST', url: '/settings/password',
      headers: { cookie: mine.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ _csrf: mine.csrf, current: 'correct horse battery', password: 'a new long password', confirm: 'a new long password' }).toString(),
    });
    expect(change.statusCode).toBe(303);
    const renewed = cookieHeader(cookiesOf(change));

    expect((await h.app.inject({ method: 'GET', url: '/', headers: { cookie: other.cookie } })).statusCode).toBe(303);
    expect((await h.app.inject({ method: 'GET', url: '/api/products', headers: { cookie: other.cookie } })).statusCode).toBe(401);
    expect((await h.app.inject({ method: 'GET', url: '/', headers: { cookie: mine.cookie } })).statusCode).toBe(303);
    expect((await h.app.inject({ method: 'GET', url: '/', headers: { cookie: renewed } })).statusCode).toBe(200);
    expect((await postSignin(h.app, user.email, 'correct horse battery')).statusCode).toBe(401);
    expect((await postSignin(h.app, user.email, 'a new long password')).statusCode).toBe(303);
  });

  test('a wrong current password changes nothing', async () => {
    const user = await seedUser(h, org.orgId, 'member');
    const { cookie, csrf } = await signIn(h.app, user.email);
    const res = await h.app.inject({
      method: 'POST', url: '/settings/password',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ _csrf: csrf, current: 'wrong', password: 'a new long password', confirm: 'a new long password' }).toString(),
    });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('current password is not right');
    expect((await h.app.inject({ method: 'GET', url: '/', headers: { cookie } })).statusCode).toBe(200);
  });

  test('a session in use still expires after its lifetime', async () => {
    const { cookie } = await signIn(h.app, ownerEmail);
    try {
      // Used every hour (within the idle timeout) up to a minute before the cap.
      for (offsetMs = 3_600_000; offsetMs < SESSION_TTL_MS; offsetMs += 3_600_000) {
        expect((await h.app.inject({ method: 'GET', url: '/', headers: { cookie } })).statusCode).toBe(200);
      }
      offsetMs = SESSION_TTL_MS - 60_000;
      expect((await h.app.inject({ method: 'GET', url: '/', headers: { cookie } })).statusCode).toBe(200);
      offsetMs = SESSION_TTL_MS + 1000;
      expect((await h.app.inject({ method: 'GET', url: '/', headers: { cookie } })).statusCode).toBe(303);
      expect((await h.app.inject({ method: 'GET', url: '/api/products', headers: { cookie } })).statusCode).toBe(401);
    } finally {
      offsetMs = 0;
    }
  });
});
