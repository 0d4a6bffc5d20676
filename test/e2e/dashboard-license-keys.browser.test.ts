/**
 * License keys in a real browser (Debian's Chromium through playwright-core, decisions §14): an
 * admin sets a product to keys from a pool with an activation limit, uploads keys and watches the
 * counts change; a sale takes one, and its buyer copies it from the download page. A member sees
 * the setting read-only and no upload form.
 */
import type { Page } from 'playwright-core';
import { MAX_POOL_KEY_LENGTH } from '../../src/domain/license-keys';
import type { Harness } from '../helpers/harness';
import { seedOrganisation, seedProduct, seedUser, type SeededProduct } from '../helpers/seed';
import { screenshot, signInAs, useDashboardBrowser } from '../helpers/browser';

jest.setTimeout(180_000);

const PASSWORD = 'correct horse battery';

let h: Harness;
let base: string;
let page: Page;
let pageErrors: string[] = [];
let apiKey: string;
let admin: { email: string };
let member: { email: string };
let product: SeededProduct;

useDashboardBrowser({
  started: (world) => ({ h, base } = world),
  opened: (opened) => ({ page, pageErrors } = opened),
});

beforeAll(async () => {
  const org = await seedOrganisation(h, { name: 'Acme Software' });
  apiKey = org.apiKey;
  admin = await seedUser(h, org.orgId, 'admin');
  member = await seedUser(h, org.orgId, 'member');
  product = await seedProduct(h, org.orgId, { slug: 'plugin-pack', name: 'Plugin Pack' });
});

const counts = async () => ({
  available: await page.getByTestId('pool-available').textContent(),
  issued: await page.getByTestId('pool-issued').textContent(),
});

/** A sale of the product to `email`, recorded with the API key; its download link from the receipt. */
async function sell(email: string): Promise<string> {
  const res = await fetch(`${base}/api/purchases`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      customerId: 'new', 'newCustomer.name': 'Kim Buyer', 'newCustomer.email': email, productId: product.productId,
      amount: '29', currency: 'eur', paymentMethod: 'custom', sendEmail: 'true',
    }).toString(),
  });
  expect(res.status).toBe(201);
  const receipt = await h.mailbox.waitFor((m) => m.to.includes(email), 30_000);
  return /http:\/\/delivery\.test(\/d\/[A-Za-z0-9_-]+)/.exec(receipt.text)![1];
}

test('an admin sets a product to a key pool with an activation limit, uploads keys and sees the counts change', async () => {
  await signInAs(page, base, admin.email, PASSWORD);
  await page.goto(`${base}/products/${product.productId}`);
  await expect(page.getByTestId('product-license-keys').textContent()).resolves.toBe('License keys: none.');
  await expect(page.getByRole('heading', { name: 'License-key pool' }).count()).resolves.toBe(0);

  // The product's form: From a pool, 2 activations per key.
  const details = page.locator('form[action$="/products/' + product.productId + '"]');
  await details.getByLabel(/^License keys/).selectOption({ label: 'From a pool' });
  await details.getByLabel(/^Activation limit/).fill('2');
  await Promise.all([page.waitForEvent('load'), details.getByRole('button', { name: 'Save' }).click()]);
  await page.getByText('Saved.').waitFor();
  await expect(page.getByTestId('product-license-keys').textContent()).resolves.toBe('License keys: from the uploaded pool, 2 activations per key.');
  await expect(details.getByLabel(/^License keys/).inputValue()).resolves.toBe('pool');
  await expect(details.getByLabel(/^Activation limit/).inputValue()).resolves.toBe('2');
  const api = await page.request.get(`${base}/api/products/${product.productId}`);
  expect((await api.json()).product.licenseKeys).toEqual({ source: 'pool', activationLimit: 2 });

  // An empty pool: counts at 0 and the warning that sales would wait.
  await expect(counts()).resolves.toEqual({ available: '0', issued: '0' });
  await expect(page.getByTestId('pool-low').textContent()).resolves.toMatch(/^The pool is empty/);

  // A line too long: 400, nothing added, the error on screen.
  const upload = page.locator('form[data-text]');
  await upload.getByLabel(/^Upload keys/).fill(`GOOD-KEY-1\n${'X'.repeat(MAX_POOL_KEY_LENGTH + 1)}\n`);
  await upload.getByRole('button', { name: 'Upload keys' }).click();
  await upload.getByRole('alert').getByText(`line 2: a license key is at most ${MAX_POOL_KEY_LENGTH} characters`).waitFor();
  await expect(counts()).resolves.toEqual({ available: '0', issued: '0' });

  // Three keys and a repeat: the answer stays on screen and the counts follow without a reload.
  await page.evaluate(() => { (window as unknown as { stayed: boolean }).stayed = true; });
  await upload.getByLabel(/^Upload keys/).fill('PACK-0001\nPACK-0002\n\nPACK-0003\nPACK-0001\n');
  await upload.getByRole('button', { name: 'Upload keys' }).click();
  await upload.getByText('3 keys added, 1 duplicate skipped.').waitFor();
  await page.getByTestId('pool-available').getByText('3', { exact: true }).waitFor();
  await expect(counts()).resolves.toEqual({ available: '3', issued: '0' });
  await expect(page.getByTestId('pool-low').textContent()).resolves.toMatch(/^Only 3 keys left \(fewer than 10\)/);
  await expect(upload.getByLabel(/^Upload keys/).inputValue()).resolves.toBe('');
  await expect(page.evaluate(() => (window as unknown as { stayed?: boolean }).stayed)).resolves.toBe(true);
  await screenshot(page, 'product-license-pool');

  // A sale takes the oldest key.
  const link = await sell('kim@example.com');
  await page.reload();
  await expect(counts()).resolves.toEqual({ available: '2', issued: '1' });

  // Its buyer sees the key on the download page and copies it.
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  await page.goto(`${base}${link}`);
  await expect(page.getByLabel('Your license key').textContent()).resolves.toBe('PACK-0001');
  await page.getByRole('button', { name: 'Copy the license key' }).click();
  await page.getByRole('status').getByText('License key copied.').waitFor();
  await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toBe('PACK-0001');
  await screenshot(page, 'download-page-license-key');
  // The browser logs the refused upload's answer; nothing else went wrong.
  expect(pageErrors).toEqual(['Failed to load resource: the server responded with a status of 400 (Bad Request)']);
});

test('a member sees the key setting read-only and the counts, without the upload form', async () => {
  await h.orm.em.fork().execute(`update product set license_source = 'pool', license_activation_limit = 2 where id = ?`, [product.productId]);
  await signInAs(page, base, member.email, PASSWORD);
  await page.goto(`${base}/products/${product.productId}`);
  const details = page.locator('form[action$="/products/' + product.productId + '"]');
  await expect(details.getByLabel(/^License keys/).isDisabled()).resolves.toBe(true);
  await expect(details.getByLabel(/^Activation limit/).getAttribute('readonly')).resolves.toBe('');
  await expect(page.getByTestId('pool-counts').count()).resolves.toBe(1);
  await expect(page.locator('form[data-text]').count()).resolves.toBe(0);
  await page.getByText('Owners and admins upload keys.').waitFor();

  // Saving the rest of the form leaves the policy as it is.
  await details.getByLabel('Description').fill('Plugins for the editor.');
  await Promise.all([page.waitForEvent('load'), details.getByRole('button', { name: 'Save' }).click()]);
  await page.getByText('Saved.').waitFor();
  await expect(page.getByTestId('product-license-keys').textContent()).resolves.toBe('License keys: from the uploaded pool, 2 activations per key.');

  // The API refuses a member's upload all the same.
  const csrf = await page.locator('body').getAttribute('data-csrf');
  const refused = await page.request.post(`${base}/api/products/${product.productId}/license-keys`, {
    headers: { 'x-csrf-token': csrf!, 'content-type': 'text/plain' }, data: 'MEMBER-KEY\n',
  });
  expect(refused.status()).toBe(403);
  expect(pageErrors).toEqual([]);
});
