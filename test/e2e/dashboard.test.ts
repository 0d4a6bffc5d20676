/**
 * The dashboard in a real browser (Debian's Chromium through playwright-core) against the app
 * listening on a port, with real PostgreSQL, Temporal and SMTP behind it.
 */
import type { Browser, Page } from 'playwright-core';
import { Purchase } from '../../src/db/entities';
import { createOrganisation } from '../../src/services/organisations';
import { sha256Hex } from '../../src/security/secrets';
import type { Harness } from '../helpers/harness';
import { seedUser } from '../helpers/seed';
import { screenshot, signInAs, useDashboardBrowser } from '../helpers/browser';

jest.setTimeout(180_000);

/** Polls until `check` holds (what a background activity writes lands a moment later). */
async function until(check: () => Promise<boolean>, tries = 100): Promise<void> {
  for (let i = 0; i < tries; i += 1) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('condition not reached');
}

let h: Harness;
let base: string;
let browser: Browser;
let page: Page;
let orgId: string;
const owner = { email: 'olive@shop.example', password: 'a long owner password' };

/** Script errors and Content-Security-Policy violations the page reports. */
let pageErrors: string[] = [];

useDashboardBrowser({
  started: (world) => ({ h, base, browser } = world),
  opened: (opened) => ({ page, pageErrors } = opened),
});

beforeAll(async () => {
  // Organisations are made with the CLI (no public sign-up): this is what `org create` runs.
  ({ orgId } = await createOrganisation(h.orm.em.fork(), h.passwords, {
    name: 'Olive Books', ownerEmail: owner.email, ownerPassword: owner.password, ownerName: 'Olive',
  }));
});

test('a new owner goes from sign-in to a first delivered sale in the browser alone', async () => {
  // Signed out, the dashboard leads to the sign-in form.
  await page.goto(`${base}/`);
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  await screenshot(page, 'sign-in');
  await page.getByLabel('Email').fill(owner.email);
  await page.getByLabel('Password').fill(owner.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();

  // A product.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Products' }).click();
  await page.getByLabel('Name').fill('Ebook Pro');
  await page.getByLabel(/^Slug/).fill('ebook-pro');
  await page.getByLabel('Description').fill('The complete guide, as PDF and EPUB.');
  await page.getByLabel(/^Extra SKUs/).fill('EBOOK-PRO-2024, ebook-pro-bundle');
  await page.getByRole('button', { name: 'Create product' }).click();
  await page.getByText('Product created. Next: upload its first version.').waitFor();
  expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Ebook Pro');

  // Its first version, uploaded with a progress bar.
  await page.getByLabel(/^Version label/).fill('1.0.0');
  await page.getByLabel('Files').setInputFiles([
    { name: 'ebook-pro.pdf', mimeType: 'application/pdf', buffer: Buffer.alloc(256 * 1024, 'p') },
    { name: 'ebook-pro.epub', mimeType: 'application/epub+zip', buffer: Buffer.alloc(64 * 1024, 'e') },
  ]);
  // The bar follows the XHR's upload events; what it showed last is kept across the reload that follows.
  await page.evaluate(() => {
    const bar = document.querySelector<HTMLProgressElement>('form[data-upload] progress')!;
    new MutationObserver(() => sessionStorage.setItem('upload-progress', `${bar.value}/${bar.max}`)).observe(bar, { attributes: true });
  });
  await page.getByRole('button', { name: 'Upload' }).click();
  const versionRow = page.locator('tr[data-version="1.0.0"]');
  await versionRow.waitFor();
  const [shown, total] = (await page.evaluate(() => sessionStorage.getItem('upload-progress')))!.split('/').map(Number);
  expect(total).toBeGreaterThan(320 * 1024);
  expect(shown).toBe(total);
  await expect(versionRow.textContent()).resolves.toMatch(/active/);
  await expect(versionRow.textContent()).resolves.toMatch(/ebook-pro\.pdf.*256\.0 KiB|ebook-pro\.epub/s);

  // Published: now it is live.
  await page.getByRole('button', { name: 'Publish' }).click();
  await page.getByText('Published.').waitFor();
  await page.getByText(/^Live: sales of/).waitFor();
  await screenshot(page, 'product');

  // The first sale, entered by hand.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Purchases' }).click();
  await page.getByRole('heading', { name: 'Create Manual Purchase' }).waitFor();
  await page.getByLabel('Customer email').fill('Sam.Buyer@Example.com');
  await page.getByLabel('Customer name').fill('Sam Buyer');
  await page.getByLabel(/^Amount/).fill('19.99');
  await page.getByRole('button', { name: 'Create purchase' }).click();
  const created = page.locator('.purchase-created');
  await created.waitFor();
  const purchaseId = await created.getAttribute('data-purchase-id');
  expect(purchaseId).toMatch(/^[0-9a-f-]{36}$/);
  await expect(created.getByRole('link').getAttribute('href')).resolves.toMatch(/^http:\/\/delivery\.test\/d\/[A-Za-z0-9_-]{40,}$/);
  // The list below refreshed itself with the new purchase.
  await page.locator(`#purchase-list tr[data-purchase-id="${purchaseId}"]`).waitFor();

  // The receipt arrives.
  const mail = await h.mailbox.waitFor((m) => m.to.includes('sam.buyer@example.com'), 30_000);
  expect(mail.subject).toContain('Ebook Pro');
  expect(mail.text).toMatch(/http:\/\/delivery\.test\/d\/[A-Za-z0-9_-]{40,}/);
  const purchase = await h.orm.em.fork().findOneOrFail(Purchase, purchaseId!, { populate: ['customer', 'product'] });
  expect(purchase.source).toBe('manual');
  expect(purchase.amount).toBe('19.9900');
  expect(purchase.product.slug).toBe('ebook-pro');

  // The receipt's state reaches the list (the activity records it just after the send); resend mails a fresh link.
  await until(async () => (await h.orm.em.fork().findOneOrFail(Purchase, purchaseId!)).receiptStatus === 'sent');
  await page.reload();
  const row = page.locator(`#purchase-list tr[data-purchase-id="${purchaseId}"]`);
  await expect(row.textContent()).resolves.toContain('sent');
  await screenshot(page, 'purchases');
  const before = h.mailbox.messages().filter((m) => m.to.includes('sam.buyer@example.com')).length;
  await row.getByRole('button', { name: 'Resend link' }).click();
  await row.getByText('A fresh link is on its way to sam.buyer@example.com.').waitFor();
  await h.mailbox.waitFor((m) => m.to.includes('sam.buyer@example.com') && h.mailbox.messages().filter((x) => x.to.includes('sam.buyer@example.com')).length > before, 30_000);

  // Search finds it by email, and not by something else.
  await page.getByLabel('Search by email or order id').fill('sam.buyer');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.getByText(/1 purchase matching/).waitFor();
  await page.getByLabel('Search by email or order id').fill('nobody@else');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.getByText('Nothing matches.').waitFor();

  // The overview counts it.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Overview' }).click();
  await expect(page.locator('.legend-sales').textContent()).resolves.toBe('1 sale');

  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Customers' }).click();
  await page.locator('tr', { hasText: 'sam.buyer@example.com' }).waitFor();
  await screenshot(page, 'customers');

  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Products' }).click();
  await page.locator('tr[data-product="ebook-pro"]', { hasText: 'live' }).waitFor();
  await screenshot(page, 'products');

  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Reports' }).click();
  await screenshot(page, 'reports');
  const download = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Download CSV' }).click();
  expect((await download).suggestedFilename()).toMatch(/\.csv$/);

  await page.goto(`${base}/settings/mailbox`);
  await page.getByRole('link', { name: /Your download: Ebook Pro/ }).first().click();
  await page.getByRole('heading', { level: 1, name: /Your download: Ebook Pro/ }).waitFor();
  await expect(page.locator('.mail-body').textContent()).resolves.toMatch(/http:\/\/delivery\.test\/d\//);
  expect(pageErrors).toEqual([]);
  await screenshot(page, 'settings-dev-mailbox');
});

test('refreshing the API key shows the new key once, and only the new key works', async () => {
  const user = await seedUser(h, orgId, 'admin');
  await signInAs(page, base, user.email, 'correct horse battery');
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
  await page.getByRole('heading', { name: 'Your API key' }).waitFor();
  const prefix = await page.getByTestId('key-prefix').textContent();
  expect(user.apiKey.startsWith(prefix!)).toBe(true);

  page.once('dialog', (dialog) => void dialog.accept());
  await page.getByRole('button', { name: 'Refresh key' }).click();
  const shown = page.locator('#new-key');
  await page.getByText('Copy your new key now').waitFor();
  const newKey = (await shown.textContent())!;
  expect(newKey).toMatch(/^dlv_/);
  expect(newKey).not.toBe(user.apiKey);
  await screenshot(page, 'settings-api-key');

  const call = (key: string) => fetch(`${base}/api/products`, { headers: { authorization: `Bearer ${key}` } });
  expect((await call(user.apiKey)).status).toBe(401);
  expect((await call(newKey)).status).toBe(200);
  // Only its hash is kept; the page shows the new prefix, never the key.
  const rows = await h.orm.em.fork().execute<Array<{ api_key_hash: string }>>('select api_key_hash from app_user where email = ?', [user.email]);
  expect(rows[0].api_key_hash).toBe(sha256Hex(newKey));
  await page.reload();
  expect(newKey.startsWith((await page.getByTestId('key-prefix').textContent())!)).toBe(true);
  expect(await page.content()).not.toContain(newKey);
});

test('a member sees no organisation settings and is refused them on the server', async () => {
  const member = await seedUser(h, orgId, 'member');
  await signInAs(page, base, member.email, 'correct horse battery');
  const nav = page.getByRole('navigation', { name: 'Main' });
  for (const name of ['Overview', 'Products', 'Purchases', 'Customers', 'Webhook log', 'Settings']) {
    await expect(nav.getByRole('link', { name, exact: true }).count()).resolves.toBe(1);
  }
  await expect(nav.getByRole('link', { name: 'Reports' }).count()).resolves.toBe(0);
  await nav.getByRole('link', { name: 'Settings' }).click();
  const tabs = page.getByRole('navigation', { name: 'Settings' });
  await expect(tabs.getByRole('link').allTextContents()).resolves.toEqual(['API Key', 'Password', 'Sessions']);

  for (const url of ['/settings/integrations', '/settings/team', '/reports', '/settings/mailbox']) {
    const response = await page.goto(`${base}${url}`);
    expect({ url, status: response?.status() }).toEqual({ url, status: 403 });
    await page.getByRole('heading', { name: 'Not allowed' }).waitFor();
  }
  await screenshot(page, 'member-forbidden');
  const csv = await page.goto(`${base}/api/reports/downloads?from=2026-01-01&to=2026-01-31`);
  expect(csv?.status()).toBe(403);
});

test('owners add people and set their roles', async () => {
  await signInAs(page, base, owner.email, owner.password);
  await page.goto(`${base}/settings/team`);
  await page.getByLabel('Email').fill('new.admin@shop.example');
  await page.getByLabel('Name').fill('Ada Admin');
  await page.getByLabel('Role', { exact: true }).selectOption('admin');
  await page.getByLabel(/^First password/).fill('first password 123');
  await page.getByRole('button', { name: 'Add' }).click();
  const row = page.locator('tr[data-user="new.admin@shop.example"]');
  await row.waitFor();
  await row.getByLabel('Role of new.admin@shop.example').selectOption('member');
  await row.getByRole('button', { name: 'Set role' }).click();
  await row.getByText('Role set to member.').waitFor();
  await screenshot(page, 'settings-team');
  const rows = await h.orm.em.fork().execute<Array<{ role: string }>>('select role from app_user where email = ?', ['new.admin@shop.example']);
  expect(rows[0].role).toBe('member');

  // The new person signs in with the first password.
  const other = await browser.newContext();
  const theirs = await other.newPage();
  await signInAs(theirs, base, 'new.admin@shop.example', 'first password 123');
  await other.close();
});

test('at phone width the pages need no sideways scrolling', async () => {
  const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  try {
    const small = await phone.newPage();
    await signInAs(small, base, owner.email, owner.password);
    for (const url of ['/', '/products', '/purchases', '/webhooks-log', '/settings/api-key']) {
      await small.goto(`${base}${url}`);
      const overflow = await small.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect({ url, overflow }).toEqual({ url, overflow: 0 });
    }
    await small.goto(`${base}/purchases`);
    await screenshot(small, 'phone-purchases');
  } finally {
    await phone.close();
  }
});
