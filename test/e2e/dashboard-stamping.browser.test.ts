/**
 * PDF stamping from the product form in a real browser (Debian's Chromium through playwright-core,
 * decisions §16): an admin ticks "Stamp PDFs for each buyer" and the product page says so; for a
 * product holding an encrypted PDF, the tick is refused on screen with the file's name and why.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { addVersionFile } from '../helpers/download-links';
import type { Harness } from '../helpers/harness';
import { seedOrganisation, seedProduct, seedUser, type SeededProduct } from '../helpers/seed';
import { screenshot, signInAs, useDashboardBrowser } from '../helpers/browser';

jest.setTimeout(180_000);

const PASSWORD = 'correct horse battery';

let h: Harness;
let base: string;
let page: Page;
let pageErrors: string[] = [];
let admin: { email: string };
let ebook: SeededProduct;
let locked: SeededProduct;

useDashboardBrowser({
  harness: { worker: false },
  started: (world) => ({ h, base } = world),
  opened: (opened) => ({ page, pageErrors } = opened),
});

beforeAll(async () => {
  const org = await seedOrganisation(h, { name: 'Acme Books' });
  admin = await seedUser(h, org.orgId, 'admin');
  ebook = await seedProduct(h, org.orgId, { slug: 'field-guide', name: 'Field Guide' });
  locked = await seedProduct(h, org.orgId, { slug: 'locked-guide', name: 'Locked Guide' });
  await addVersionFile(h, locked.versionId, 'locked.pdf', readFileSync(path.join(__dirname, '../fixtures/pdf/encrypted.pdf')));
});

const detailsForm = (productId: string) => page.locator(`form[action$="/products/${productId}"]`);

test('an admin turns stamping on from the product form, and it is refused for a product with an encrypted PDF', async () => {
  await signInAs(page, base, admin.email, PASSWORD);
  await page.goto(`${base}/products/${ebook.productId}`);
  await expect(page.getByTestId('product-stamp-pdfs').textContent()).resolves.toBe('PDF stamping: off: files are served as uploaded.');
  const details = detailsForm(ebook.productId);
  await details.getByLabel(/Stamp PDFs for each buyer/).check();
  await Promise.all([page.waitForEvent('load'), details.getByRole('button', { name: 'Save' }).click()]);
  await page.getByText('Saved.').waitFor();
  await expect(page.getByTestId('product-stamp-pdfs').textContent()).resolves.toMatch(/^PDF stamping: on/);
  await expect(details.getByLabel(/Stamp PDFs for each buyer/).isChecked()).resolves.toBe(true);
  expect((await (await page.request.get(`${base}/api/products/${ebook.productId}`)).json()).product.stampPdfs).toBe(true);
  await screenshot(page, 'product-stamp-pdfs');

  // Saving the form with the box unticked turns it off again.
  await details.getByLabel(/Stamp PDFs for each buyer/).uncheck();
  await Promise.all([page.waitForEvent('load'), details.getByRole('button', { name: 'Save' }).click()]);
  await page.getByText('Saved.').waitFor();
  await expect(page.getByTestId('product-stamp-pdfs').textContent()).resolves.toMatch(/^PDF stamping: off/);

  await page.goto(`${base}/products/${locked.productId}`);
  const lockedForm = detailsForm(locked.productId);
  await lockedForm.getByLabel(/Stamp PDFs for each buyer/).check();
  await lockedForm.getByRole('button', { name: 'Save' }).click();
  await page.getByText('locked.pdf cannot be stamped for buyers: the PDF is encrypted (password-protected); upload it without encryption').waitFor();
  expect((await (await page.request.get(`${base}/api/products/${locked.productId}`)).json()).product.stampPdfs).toBe(false);
  // The browser logs the refused save (htmx, and the resource load); nothing else went wrong.
  expect(pageErrors.filter((e) => !/status of 422|Response Status Error Code 422/.test(e))).toEqual([]);
});
