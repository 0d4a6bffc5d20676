/**
 * The purchase page in a real browser (Debian's Chromium through playwright-core): staff revoke and
 * restore access, override the download limit, re-arm (a fresh link by email, the old one dead),
 * and fetch the dispute evidence (decisions §9–§11); members see the page without the actions.
 */
import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { randomUUID } from 'node:crypto';
import { Purchase } from '../../src/db/entities';
import type { Harness } from '../helpers/harness';
import { seedOrganisation, seedProduct, seedUser, type SeededProduct } from '../helpers/seed';
import { seedPurchase, tokenOfLink, type SeededPurchase } from '../helpers/download-links';
import { screenshot, signInAs, useDashboardBrowser } from '../helpers/browser';

jest.setTimeout(180_000);

/** Polls until `check` holds (what the download route or a workflow writes lands a moment later). */
async function until(check: () => Promise<boolean>, tries = 150): Promise<void> {
  for (let i = 0; i < tries; i += 1) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('condition not reached');
}

const PASSWORD = 'correct horse battery';
/** A user agent with markup in it: the accesses table must show it as text. */
const HOSTILE_AGENT = '<img src=x id=injected> Tester/1.0';

let h: Harness;
let base: string;
let page: Page;
let orgId: string;
let product: SeededProduct;
let purchase: SeededPurchase;
let admin: { email: string };
let pageErrors: string[] = [];

const buyer = 'sam.buyer@example.com';

/** The customer's link (built from SITE_URL in emails), asked of this server. */
const customerUrl = (token: string, suffix = '') => `${base}/d/${encodeURIComponent(token)}${suffix}`;

const purchaseRow = () => h.orm.em.fork().findOneOrFail(Purchase, purchase.purchaseId);

useDashboardBrowser({
  context: { acceptDownloads: true },
  started: (world) => ({ h, base } = world),
  opened: (opened) => ({ page, pageErrors } = opened),
});

beforeAll(async () => {
  ({ orgId } = await seedOrganisation(h, { name: 'Acme Books' }));
  admin = await seedUser(h, orgId, 'admin');
  product = await seedProduct(h, orgId, { name: 'Ebook Pro', slug: 'ebook-pro' });
  purchase = await seedPurchase(h, orgId, product, { email: buyer, name: 'Sam <b>Buyer</b>' });

  // The buyer opens the link and downloads the file once: a page open and a file transfer.
  const opened = await fetch(customerUrl(purchase.token), { headers: { 'user-agent': HOSTILE_AGENT } });
  expect(opened.status).toBe(200);
  const file = await fetch(customerUrl(purchase.token, `/files/${product.fileId}`), { headers: { 'user-agent': HOSTILE_AGENT } });
  expect(file.status).toBe(200);
  expect(Buffer.from(await file.arrayBuffer())).toEqual(product.fileBytes);
  await until(async () => (await h.orm.em.fork().execute(
    `select 1 from activity_log_entry where purchase_id = ? and kind = 'file_download'`, [purchase.purchaseId],
  )).length === 1);

});

/** Clicks a data-json form's button; the page reloads once the API answered. */
async function submitAndReload(button: ReturnType<Page['getByRole']>, confirm: boolean): Promise<void> {
  if (confirm) page.once('dialog', (dialog) => void dialog.accept());
  await Promise.all([page.waitForEvent('load'), button.click()]);
}

test('an admin revokes, restores, sets a limit, re-arms and fetches the evidence from the purchase page', async () => {
  await signInAs(page, base, admin.email, PASSWORD);

  // From the list to the purchase's page.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Purchases' }).click();
  const row = page.locator(`#purchase-list tr[data-purchase-id="${purchase.purchaseId}"]`);
  await row.getByRole('link', { name: /^Details/ }).click();
  await page.getByRole('heading', { level: 1, name: 'Purchase of Ebook Pro' }).waitFor();
  expect(new URL(page.url()).pathname).toBe(`/purchases/${purchase.purchaseId}`);
  await expect(page.getByTestId('access-status').textContent()).resolves.toContain('active');
  await expect(page.getByText('Sam <b>Buyer</b>').count()).resolves.toBe(1); // the name as text, not markup
  await expect(page.getByTestId('download-limit').textContent()).resolves.toMatch(/^unlimited/);
  await expect(page.getByTestId('downloads-used').textContent()).resolves.toMatch(/^1 completed file transfer since the purchase/);

  // The link issued, the page open and the file transfer, with the buyer's IP and (escaped) browser.
  await expect(page.getByTestId('links').locator('tbody tr').count()).resolves.toBe(1);
  const accesses = page.getByTestId('accesses').locator('tbody tr');
  await expect(accesses.count()).resolves.toBe(2);
  await expect(accesses.nth(0).textContent()).resolves.toMatch(/file transfer.*ebook-pro\.txt.*127\.0\.0\.1/s);
  await expect(accesses.nth(1).textContent()).resolves.toMatch(/page open/);
  await expect(accesses.nth(0).textContent()).resolves.toContain(HOSTILE_AGENT);
  await expect(page.locator('#injected').count()).resolves.toBe(0);
  await screenshot(page, 'purchase-page');

  // Revoke (after the confirmation): the notice says so, and the buyer's link answers 410.
  await submitAndReload(page.getByRole('button', { name: 'Revoke access' }), true);
  const withdrawn = page.getByTestId('access-withdrawn');
  await withdrawn.waitFor();
  await expect(withdrawn.textContent()).resolves.toMatch(/Access withdrawn \(manual\) on \d{2} \w{3} \d{4}/);
  await expect(page.getByRole('button', { name: 'Restore access' }).isVisible()).resolves.toBe(true);
  await expect(page.getByRole('button', { name: /^Re-arm/ }).count()).resolves.toBe(0);
  await expect(page.getByTestId('staff-actions').textContent()).resolves.toMatch(/Access withdrawn.*admin-/s);
  await screenshot(page, 'purchase-revoked');
  const gone = await fetch(customerUrl(purchase.token));
  expect(gone.status).toBe(410);
  expect(await gone.text()).toContain('Access to this download has been withdrawn');
  expect((await fetch(customerUrl(purchase.token, `/files/${product.fileId}`))).status).toBe(410);
  expect((await purchaseRow()).revokeReason).toBe('manual');

  // The list shows it revoked.
  await page.goto(`${base}/purchases`);
  await expect(row.locator('.badge-revoked').textContent()).resolves.toBe('revoked');
  await row.getByRole('link', { name: /^Details/ }).click();

  // Restore: the link works again.
  await submitAndReload(page.getByRole('button', { name: 'Restore access' }), false);
  await page.getByTestId('access-status').getByText('active').waitFor();
  await expect(page.getByTestId('access-withdrawn').count()).resolves.toBe(0);
  expect((await fetch(customerUrl(purchase.token))).status).toBe(200);

  // The purchase's own download limit.
  await page.getByLabel(/^Limit for this purchase/).fill('2');
  await submitAndReload(page.getByRole('button', { name: 'Save limit' }), false);
  await expect(page.getByTestId('download-limit').textContent()).resolves.toMatch(/^2 completed file transfers per purchase \(this purchase's own limit; the product's is unlimited\)/);
  await expect(page.getByLabel(/^Limit for this purchase/).inputValue()).resolves.toBe('2');
  expect((await purchaseRow()).downloadLimit).toBe(2);

  // Re-arm (after the confirmation): the page says where the link went, the mail comes, the old link is dead.
  page.once('dialog', (dialog) => void dialog.accept());
  await page.getByRole('button', { name: /^Re-arm/ }).click();
  const sent = page.getByTestId('rearm-sent');
  await sent.waitFor({ state: 'visible' });
  await expect(sent.textContent()).resolves.toBe(`A fresh link is on its way to ${buyer}.`);
  const mail = await h.mailbox.waitFor((m) => m.to.includes(buyer) && /fresh download link/i.test(m.subject), 30_000);
  expect(mail.subject).toContain('Ebook Pro');
  const link = /http:\/\/delivery\.test\/d\/[A-Za-z0-9_-]{40,}/.exec(mail.text)?.[0];
  expect(link).toBeDefined();
  const freshToken = tokenOfLink(link!);
  expect(freshToken).not.toBe(purchase.token);
  const old = await fetch(customerUrl(purchase.token));
  expect(old.status).toBe(410);
  expect(await old.text()).toContain('<h1>This download link has expired</h1>');
  expect((await fetch(customerUrl(freshToken))).status).toBe(200);

  // Back on the purchase page: the count starts again, the fresh link is listed, the actions logged.
  await page.goto(`${base}/purchases/${purchase.purchaseId}`);
  await expect(page.getByTestId('downloads-used').textContent()).resolves.toMatch(/^0 completed file transfers since the last re-arm/);
  await expect(page.getByTestId('links').textContent()).resolves.toContain('Re-arm by staff');
  const actions = await page.getByTestId('staff-actions').locator('tbody tr td:nth-child(2)').allTextContents();
  expect(actions).toEqual(['Re-armed', 'Download limit changed', 'Access restored', 'Access withdrawn']);
  await screenshot(page, 'purchase-rearmed');

  // The evidence, as JSON and as a PDF.
  const jsonHref = await page.getByRole('link', { name: 'Evidence (JSON)' }).getAttribute('href');
  expect(jsonHref).toBe(`/api/purchases/${purchase.purchaseId}/evidence?format=json`);
  const [jsonAnswer] = await Promise.all([
    page.waitForResponse((res) => res.url().endsWith(jsonHref!)),
    page.getByRole('link', { name: 'Evidence (JSON)' }).click(),
  ]);
  expect(jsonAnswer.status()).toBe(200);
  expect(jsonAnswer.headers()['content-type']).toMatch(/^application\/json/);
  const record = await jsonAnswer.json() as { purchase: { id: string }; staffActions: Array<{ action: string }> };
  expect(record.purchase.id).toBe(purchase.purchaseId);
  expect(record.staffActions.map((s) => s.action)).toEqual(['revoke', 'restore', 'download_limit', 'rearm']);
  await page.goBack();

  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('link', { name: 'Evidence (PDF)' }).click(),
  ]);
  expect(download.suggestedFilename()).toBe(`evidence-${purchase.purchaseId}.pdf`);
  expect((await readFile((await download.path())!)).subarray(0, 5).toString('latin1')).toBe('%PDF-');
  const pdfAnswer = await page.request.get(`${base}/api/purchases/${purchase.purchaseId}/evidence?format=pdf`);
  expect(pdfAnswer.status()).toBe(200);
  expect(pdfAnswer.headers()['content-type']).toBe('application/pdf');

  expect(pageErrors).toEqual([]);
});

test('a member sees the purchase page without its actions and the evidence links', async () => {
  const member = await seedUser(h, orgId, 'member');
  const other = await seedPurchase(h, orgId, product, { email: 'pat@example.com' });
  await h.orm.em.fork().execute(`update purchase set revoked_at = now(), revoke_reason = 'refund' where id = ?`, [other.purchaseId]);
  await signInAs(page, base, member.email, PASSWORD);

  await page.goto(`${base}/purchases/${other.purchaseId}`);
  await page.getByRole('heading', { level: 1, name: 'Purchase of Ebook Pro' }).waitFor();
  const withdrawn = page.getByTestId('access-withdrawn');
  await expect(withdrawn.textContent()).resolves.toMatch(/Access withdrawn \(refund\) on/);
  await expect(withdrawn.textContent()).resolves.not.toContain('Restore access below');
  for (const name of [/Revoke access/, /Restore access/, /^Re-arm/, /Save limit/]) {
    await expect(page.getByRole('button', { name }).count()).resolves.toBe(0);
  }
  await expect(page.getByRole('link', { name: /^Evidence/ }).count()).resolves.toBe(0);
  await expect(page.getByLabel(/^Limit for this purchase/).count()).resolves.toBe(0);
  await expect(page.locator('form[data-json]').count()).resolves.toBe(0);
  // What it shows is still there.
  await expect(page.getByTestId('download-limit').textContent()).resolves.toMatch(/^unlimited/);
  await page.getByRole('heading', { name: 'Links issued' }).waitFor();
  await screenshot(page, 'purchase-page-member');

  // The API refuses a member's revoke all the same (same session, CSRF header).
  const csrf = await page.locator('body').getAttribute('data-csrf');
  const refused = await page.request.post(`${base}/api/purchases/${purchase.purchaseId}/revoke`, { headers: { 'x-csrf-token': csrf! } });
  expect(refused.status()).toBe(403);

  // Unknown and other organisations' purchases are a 404 page.
  const stranger = await seedOrganisation(h);
  const theirs = await seedPurchase(h, stranger.orgId, await seedProduct(h, stranger.orgId));
  for (const id of [randomUUID(), theirs.purchaseId, 'not-a-uuid']) {
    const res = await page.goto(`${base}/purchases/${id}`);
    expect(res?.status()).toBe(404);
    await expect(page.locator('h1').textContent()).resolves.toBe('Not found');
  }
  expect(pageErrors).toEqual([]);
});

test('the product\'s download limit and the support address are set from their forms', async () => {
  await signInAs(page, base, admin.email, PASSWORD);
  await page.goto(`${base}/products/${product.productId}`);
  await expect(page.getByTestId('product-download-limit').textContent()).resolves.toBe('Download limit: unlimited.');
  await page.getByLabel(/^Download limit/).fill('5');
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await page.getByText('Saved.').waitFor();
  await expect(page.getByTestId('product-download-limit').textContent()).resolves.toMatch(/^Download limit: 5 per purchase/);
  await expect(page.getByLabel(/^Download limit/).inputValue()).resolves.toBe('5');
  await page.goto(`${base}/products`);
  await expect(page.locator('tr[data-product="ebook-pro"]').textContent()).resolves.toContain('5 per purchase');

  // Emptied: unlimited again.
  await page.goto(`${base}/products/${product.productId}`);
  await page.getByLabel(/^Download limit/).fill('');
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await page.getByText('Saved.').waitFor();
  await expect(page.getByTestId('product-download-limit').textContent()).resolves.toBe('Download limit: unlimited.');

  // The support address, in Settings, Organisation.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
  await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Organisation' }).click();
  await expect(page.getByTestId('support-email').textContent()).resolves.toContain('none set');
  await page.getByLabel(/^Support email/).fill('Help@Acme.example');
  await page.getByRole('region', { name: 'Support address' }).getByRole('button', { name: 'Save' }).click();
  await page.getByText('Saved.').waitFor();
  await expect(page.getByTestId('support-email').textContent()).resolves.toBe('Now: help@acme.example');
  await screenshot(page, 'settings-organisation');
  await page.getByLabel(/^Support email/).fill('');
  await page.getByRole('region', { name: 'Support address' }).getByRole('button', { name: 'Save' }).click();
  await page.getByTestId('support-email').getByText('none set').waitFor();
  expect(pageErrors).toEqual([]);
});
