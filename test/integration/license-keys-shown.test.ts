/**
 * Where a buyer and the staff see a purchase's license key (decisions §14): `licenseKey` of
 * GET /api/purchases and of the purchase events, the receipt, the download page and the /my email.
 * Real PostgreSQL, Temporal and SMTP; sales recorded through POST /api/purchases.
 */
import { randomBytes } from 'node:crypto';
import { GENERATED_KEY_RE } from '../../src/domain/license-keys';
import { startHarness, type Harness } from '../helpers/harness';
import { tokenOfLink } from '../helpers/download-links';
import { seedOrganisation, seedProduct, type SeededProduct } from '../helpers/seed';
import { listedEvents } from '../helpers/events';

let h: Harness;
let owner: Record<string, string>;
let generated: SeededProduct;
let plain: SeededProduct;
let pooled: SeededProduct;

async function setLicenseKeys(productId: string, licenseKeys: object | null): Promise<void> {
  const res = await h.app.inject({ method: 'PUT', url: `/api/products/${productId}`, headers: owner, payload: { licenseKeys } });
  expect(res.statusCode).toBe(200);
}

beforeAll(async () => {
  h = await startHarness({ env: { DISPATCH_POLL_INTERVAL: '1s' } });
  const org = await seedOrganisation(h, { name: 'Acme Software' });
  owner = { authorization: `Bearer ${org.apiKey}` };
  generated = await seedProduct(h, org.orgId, { name: 'Editor Pro' });
  plain = await seedProduct(h, org.orgId, { name: 'Ebook' });
  pooled = await seedProduct(h, org.orgId, { name: 'Plugin Pack' });
  await setLicenseKeys(generated.productId, { source: 'generated', activationLimit: 3 });
  await setLicenseKeys(pooled.productId, { source: 'pool', activationLimit: null });
});
afterAll(() => h?.close());

/** Records a sale of `product` to a new customer through the dashboard's form API, with its receipt; its purchase id. */
async function sell(product: SeededProduct, email: string): Promise<string> {
  const res = await h.app.inject({
    method: 'POST',
    url: '/api/purchases',
    headers: { ...owner, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({
      customerId: 'new', 'newCustomer.name': 'Kim Buyer', 'newCustomer.email': email, productId: product.productId,
      amount: '49', currency: 'usd', paymentMethod: 'custom', sendEmail: 'true',
    }).toString(),
  });
  expect(res.statusCode).toBe(201);
  return /data-purchase-id="([^"]+)"/.exec(res.body)![1];
}

interface ListedPurchase { id: string; licenseKey: string | null }

async function listed(purchaseId: string): Promise<ListedPurchase> {
  const res = await h.app.inject({ method: 'GET', url: '/api/purchases?limit=1000', headers: owner });
  expect(res.statusCode).toBe(200);
  return (res.json() as ListedPurchase[]).find((p) => p.id === purchaseId)!;
}

const newEmail = (who: string) => `${who}-${randomBytes(3).toString('hex')}@example.com`;
const LINK_RE = /http:\/\/delivery\.test\/d\/[A-Za-z0-9_-]{40,}/;

describe('a generated-key product\'s sale', () => {
  let email: string;
  let purchaseId: string;
  let key: string;

  beforeAll(async () => {
    email = newEmail('kim');
    purchaseId = await sell(generated, email);
    key = (await listed(purchaseId)).licenseKey!;
  });

  test('GET /api/purchases shows its key; a sale of a product without keys shows null', async () => {
    expect(key).toMatch(GENERATED_KEY_RE);
    const other = await sell(plain, newEmail('lee'));
    expect((await listed(other)).licenseKey).toBeNull();
  });

  test('the receipt shows the key in both parts (HTML: in a code box)', async () => {
    const mail = await h.mailbox.waitFor((m) => m.to.includes(email), 20_000);
    expect(mail.text.split('\n')).toContain(`Your license key: ${key}`);
    expect(mail.html).toMatch(new RegExp(`Your license key: <code[^>]*>${key}</code>`));
  });

  test('the download page shows the key, labelled, with a copy button for the script to reveal', async () => {
    const mail = await h.mailbox.waitFor((m) => m.to.includes(email), 20_000);
    const res = await h.app.inject({ method: 'GET', url: `/d/${tokenOfLink(LINK_RE.exec(mail.text)![0])}` });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain(`<code class="license-key" id="license-key" aria-labelledby="license-key-label">${key}</code>`);
    expect(res.body).toContain('<p class="license-label" id="license-key-label">Your license key</p>');
    expect(res.body).toMatch(/<button type="button"[^>]*id="copy-license-key"[^>]*hidden>Copy<\/button>/);
  });

  test('the /my email shows the key under its product', async () => {
    const res = await h.app.inject({
      method: 'POST', url: '/my', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ email }).toString(),
    });
    expect(res.statusCode).toBe(200);
    const mail = await h.mailbox.waitFor((m) => m.to.includes(email) && m.subject.startsWith('Your fresh download link'), 20_000);
    expect(mail.text).toContain(`Editor Pro (version 1.0.0)\nYour license key: ${key}\nhttp://delivery.test/d/`);
    expect(mail.html).toMatch(new RegExp(`<code[^>]*>${key}</code>`));
  });

  test('the purchase.created event\'s data (the purchase as recorded) has the key', async () => {
    const events = await listedEvents<{ data: ListedPurchase }>(h.app, owner, 'purchase.created', (e) => e.data.id === purchaseId, 20_000);
    expect(events[0].data.licenseKey).toBe(key);
  });
});

test('a pool sale shows null while it waits for a key, then the uploaded key, in the list and its receipt', async () => {
  const email = newEmail('pat');
  const purchaseId = await sell(pooled, email);
  expect((await listed(purchaseId)).licenseKey).toBeNull();

  const upload = await h.app.inject({
    method: 'POST', url: `/api/products/${pooled.productId}/license-keys`,
    headers: { ...owner, 'content-type': 'text/plain' }, payload: 'POOL-KEY-0001\nPOOL-KEY-0002\n',
  });
  expect(upload.json()).toEqual({ added: 2, duplicates: 0 });
  expect((await listed(purchaseId)).licenseKey).toBe('POOL-KEY-0001');
  const mail = await h.mailbox.waitFor((m) => m.to.includes(email), 30_000);
  expect(mail.text).toContain('Your license key: POOL-KEY-0001');
});
