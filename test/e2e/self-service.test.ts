import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { DevMail } from '../../src/dev/dev-mailbox';
import { buildApiApp } from '../../src/roles';
import { SELF_SERVICE_LIMITS } from '../../src/http/routes/customer/limits';
import { startHarness, unreachableStarter, type Harness } from '../helpers/harness';
import { seedOrganisation, seedProduct, type SeededProduct } from '../helpers/seed';
import { freshLinkRunsSettled, listen, seedPurchase, tokenOfLink } from '../helpers/download-links';
import { eventually } from '../helpers/webhooks';

/** The service's clock, moved by the tests so links expire without waiting. */
let offsetMs = 0;
const clock = () => new Date(Date.now() + offsetMs);

let h: Harness;
let base: string;
let acme: { orgId: string };
let globex: { orgId: string };
let ebook: SeededProduct;
let course: SeededProduct;
let toolkit: SeededProduct;

beforeAll(async () => {
  // The tests stand for clients behind a reverse proxy on loopback: it tells each one's address.
  h = await startHarness({ clock, env: { TRUST_PROXY: 'loopback' } });
  base = await listen(h);
  acme = await seedOrganisation(h, { name: 'Acme Books' });
  globex = await seedOrganisation(h, { name: 'Globex Software' });
  ebook = await seedProduct(h, acme.orgId, { name: 'Ebook Pro' });
  course = await seedProduct(h, acme.orgId, { name: 'Video Course' });
  toolkit = await seedProduct(h, globex.orgId, { name: 'Dev Toolkit' });
});
afterAll(() => h?.close());
afterEach(() => {
  offsetMs = 0;
});

/** Every request from its own client address unless a test says otherwise (the per-IP limit). */
let ipCounter = 0;
const nextIp = () => `203.0.113.${(ipCounter += 1) % 250}`;

function postMy(email: string, ip = nextIp()) {
  return fetch(`${base}/my`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': ip },
    body: new URLSearchParams({ email }).toString(),
  });
}

function postRefresh(token: string, ip = nextIp(), body = '') {
  return fetch(`${base}/d/${token}/refresh`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': ip },
    body,
  });
}

/** The page's visible text: what a person reads. */
function visibleText(page: string): string {
  return page.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim();
}

/**
 * RECORD_HISTORIES=1 (the convention of test/integration/workflow-replay.test.ts, which replays
 * every history in test/fixtures/histories): keeps the histories of these runs, named by outcome.
 */
async function recordHistories(ids: string[]): Promise<void> {
  if (process.env.RECORD_HISTORIES !== '1') return;
  const dir = path.resolve(__dirname, '../fixtures/histories');
  for (const id of ids) {
    const handle = h.temporal.workflow.getHandle(id);
    const { emails } = (await handle.result()) as { emails: number };
    const name = emails === 0 ? 'fresh-links-no-purchases' : `fresh-links-${emails}-emails`;
    await writeFile(path.join(dir, `${name}.json`), `${JSON.stringify(JSON.parse(JSON.stringify(await handle.fetchHistory())), null, 1)}\n`);
  }
}

const mailsTo = (address: string): DevMail[] => h.mailbox.messages().filter((m) => m.to.includes(address));
const LINK_RE = /http:\/\/delivery\.test\/d\/[A-Za-z0-9_-]{40,}/g;

describe('/my', () => {
  test('GET /my shows a form with an Email field', async () => {
    const res = await fetch(`${base}/my`);
    expect(res.status).toBe(200);
    const page = await res.text();
    expect(page).toContain('<form method="post" action="/my"');
    expect(page).toContain('<label for="email">Email</label>');
    expect(page).toContain('name="email"');
  });

  test('known and unknown addresses get the same answer; the known one gets one email per organisation', async () => {
    const email = `pat-${randomBytes(3).toString('hex')}@example.com`;
    await seedPurchase(h, acme.orgId, ebook, { email, name: 'Pat Doe' });
    await seedPurchase(h, acme.orgId, course, { email });
    await seedPurchase(h, globex.orgId, toolkit, { email });

    const known = await postMy(`  ${email.toUpperCase()} `);
    const unknown = await postMy(`nobody-${randomBytes(3).toString('hex')}@example.com`);
    expect(known.status).toBe(200);
    expect(unknown.status).toBe(200);
    const [knownPage, unknownPage] = [await known.text(), await unknown.text()];
    expect(visibleText(knownPage)).toBe(visibleText(unknownPage));
    expect(knownPage).toBe(unknownPage);
    expect(visibleText(knownPage)).toContain('Check your email');

    await recordHistories(await freshLinkRunsSettled(h, 2));
    const mails = mailsTo(email);
    expect(mails).toHaveLength(2);
    const fromAcme = mails.find((m) => m.subject.includes('Acme Books'))!;
    const fromGlobex = mails.find((m) => m.subject.includes('Globex Software'))!;
    expect(fromAcme.subject).toBe('Your 2 download links from Acme Books');
    expect(fromAcme.text).toContain('Hello Pat Doe,');
    expect(fromAcme.text).toContain('Ebook Pro (version 1.0.0)');
    expect(fromAcme.text).toContain('Video Course (version 1.0.0)');
    expect(fromAcme.text).not.toContain('Dev Toolkit');
    expect(fromAcme.text).toMatch(/Works until \w+day \d+ \w+ \d{4}, \d\d:\d\d UTC/);
    expect(fromAcme.html).toContain('Ebook Pro');
    expect(fromGlobex.subject).toBe('Your fresh download link: Dev Toolkit from Globex Software');
    expect(fromGlobex.text).not.toContain('Ebook Pro');

    // The links are new and work (the site URL is SITE_URL's, not this listener's).
    const links = [...fromAcme.text.matchAll(LINK_RE), ...fromGlobex.text.matchAll(LINK_RE)].map((m) => m[0]);
    expect(new Set(links).size).toBe(3);
    for (const link of links) {
      const res = await fetch(`${base}/d/${tokenOfLink(link)}`);
      expect(res.status).toBe(200);
    }
  });

  test('something that is not an email address → 400 with the form again', async () => {
    const res = await postMy('not-an-address');
    expect(res.status).toBe(400);
    const page = await res.text();
    expect(page).toContain('Please enter the email address you used when you bought.');
    expect(page).toContain('name="email"');
  });

  test('JSON is refused: the form posts form fields', async () => {
    const res = await fetch(`${base}/my`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': nextIp() },
      body: JSON.stringify({ email: 'x@example.com' }),
    });
    expect(res.status).toBe(415);
  });

  test(`more than ${SELF_SERVICE_LIMITS.perEmail.max} requests for one address in an hour → 429 with a friendly page`, async () => {
    const email = `busy-${randomBytes(3).toString('hex')}@example.com`;
    for (let i = 0; i < SELF_SERVICE_LIMITS.perEmail.max; i += 1) {
      // Spelled differently each time: the limit keys on the normalised address.
      expect((await postMy(i % 2 ? email.toUpperCase() : email)).status).toBe(200);
    }
    const refused = await postMy(email);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await refused.text()).toContain('Please wait a little');
    // Another address is not affected.
    expect((await postMy(`other-${randomBytes(3).toString('hex')}@example.com`)).status).toBe(200);
    // The window is an hour.
    offsetMs = SELF_SERVICE_LIMITS.perEmail.windowMs + 1_000;
    expect((await postMy(email)).status).toBe(200);
  });

  test(`more than ${SELF_SERVICE_LIMITS.perIp.max} requests from one IP in 10 minutes → 429`, async () => {
    const ip = '192.0.2.77';
    for (let i = 0; i < SELF_SERVICE_LIMITS.perIp.max; i += 1) {
      expect((await postMy(`ip-${i}-${randomBytes(3).toString('hex')}@example.com`, ip)).status).toBe(200);
    }
    const refused = await postMy(`ip-last-${randomBytes(3).toString('hex')}@example.com`, ip);
    expect(refused.status).toBe(429);
    expect(await refused.text()).toContain('Please wait a little');
    // The "email me a fresh link" button shares the per-IP budget.
    const { token } = await seedPurchase(h, acme.orgId, ebook);
    expect((await postRefresh(token, ip)).status).toBe(429);
    expect((await postMy(`ip-other-${randomBytes(3).toString('hex')}@example.com`, '192.0.2.78')).status).toBe(200);
  });
});

describe('the fresh-link button of a spent link', () => {
  test('emails a new link for that purchase to the purchase\'s email, never to an address from the request', async () => {
    const email = `sam-${randomBytes(3).toString('hex')}@example.com`;
    const { token } = await seedPurchase(h, acme.orgId, ebook, { email, now: clock() });
    await seedPurchase(h, acme.orgId, course, { email }); // another purchase: not part of this link
    offsetMs = h.config.downloadLinks.ttlMs + 3_600_000; // an hour past the link's lifetime
    expect((await fetch(`${base}/d/${token}`)).status).toBe(410);

    const attacker = `attacker-${randomBytes(3).toString('hex')}@example.com`;
    const res = await postRefresh(token, nextIp(), new URLSearchParams({ email: attacker }).toString());
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('We are sending a fresh download link to the email address the purchase was made with.');

    const mail = await h.mailbox.waitFor((m) => m.to.includes(email), 20_000);
    expect(mail.subject).toBe('Your fresh download link: Ebook Pro from Acme Books');
    expect(mail.text).not.toContain('Video Course');
    const [link] = mail.text.match(LINK_RE)!;
    offsetMs = 0; // the new link was issued at the real time
    expect((await fetch(`${base}/d/${tokenOfLink(link)}`)).status).toBe(200);
    expect(mailsTo(attacker)).toHaveLength(0);
  });

  test('an unknown token → 404, and nothing is sent', async () => {
    const res = await postRefresh(randomBytes(32).toString('base64url'));
    expect(res.status).toBe(404);
  });

  test(`more than ${SELF_SERVICE_LIMITS.perLink.max} presses for one link in an hour → 429`, async () => {
    const { token } = await seedPurchase(h, acme.orgId, ebook);
    for (let i = 0; i < SELF_SERVICE_LIMITS.perLink.max; i += 1) expect((await postRefresh(token)).status).toBe(200);
    const refused = await postRefresh(token);
    expect(refused.status).toBe(429);
    expect(await refused.text()).toContain('Please wait a little');
  });
});

test('the customer pages\' assets are served, and nothing else under their prefix', async () => {
  const js = await fetch(`${base}/assets/customer/downloader.js`);
  expect(js.status).toBe(200);
  expect(js.headers.get('content-type')).toMatch(/javascript/);
  expect(await js.text()).toContain('download-complete');
  const css = await fetch(`${base}/assets/customer/customer.css`);
  expect(css.status).toBe(200);
  expect(css.headers.get('content-type')).toMatch(/text\/css/);
  for (const name of ['..%2F..%2Fpackage.json', 'app.css', 'index.ts']) {
    expect((await fetch(`${base}/assets/customer/${name}`)).status).toBe(404);
  }
});

test('when Temporal is out of reach, /my and the button answer at once and the links go out through another process', async () => {
  const unreachable = unreachableStarter(h.config);
  const app = await buildApiApp({ config: h.config, orm: h.orm, starter: unreachable, storage: h.storage, clock });
  await app.ready();
  const email = `outage-${Date.now()}@example.com`;
  try {
    const form = { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': nextIp() };
    const { token } = await seedPurchase(h, acme.orgId, ebook, { email });
    const started = Date.now();
    const button = await app.inject({ method: 'POST', url: `/d/${token}/refresh`, headers: form, payload: '' });
    expect(button.statusCode).toBe(200);
    const my = await app.inject({ method: 'POST', url: '/my', headers: form, payload: `email=${encodeURIComponent(email)}` });
    expect(my.statusCode).toBe(200);
    expect(Date.now() - started).toBeLessThan(2_000);
  } finally {
    // That process goes away; its rows wait in the outbox.
    await app.close();
  }
  // The harness's own app stands for a second API process whose dispatcher reaches Temporal.
  await eventually(async () => (h.mailbox.messages().filter((m) => m.to.includes(email)).length === 2 ? true : undefined), 30_000);
});
