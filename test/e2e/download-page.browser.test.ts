import { randomBytes } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { chromium, type Browser, type Download } from 'playwright-core';
import { ActivityLogEntry, DownloadToken, Product } from '../../src/db/entities';
import { sha256Hex } from '../../src/security/secrets';
import { startHarness, type Harness } from '../helpers/harness';
import { seedOrganisation, seedProduct, type SeededProduct } from '../helpers/seed';
import { addVersionFile, listen, seedPurchase, sha256 } from '../helpers/download-links';
import { eventually } from '../helpers/webhooks';

/** The service's clock, moved to show an expired link. */
let offsetMs = 0;
const clock = () => new Date(Date.now() + offsetMs);

const SCREENSHOTS = path.resolve(__dirname, '../../docs/screenshots');
const archive = randomBytes(6 * 1024 * 1024);

let h: Harness;
let base: string;
let browser: Browser;
let org: { orgId: string };
let product: SeededProduct;

beforeAll(async () => {
  h = await startHarness({ clock });
  base = await listen(h);
  org = await seedOrganisation(h, { name: 'Acme Books' });
  product = await seedProduct(h, org.orgId, { name: 'Ebook Pro', slug: 'ebook-pro' });
  await addVersionFile(h, product.versionId, 'Ebook Pro - extras.zip', archive);
  await mkdir(SCREENSHOTS, { recursive: true });
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run'],
  });
});
afterAll(async () => {
  await browser?.close();
  await h?.close();
});

async function tokenRow(token: string): Promise<DownloadToken> {
  return h.orm.em.fork().findOneOrFail(DownloadToken, { tokenHash: sha256Hex(token) });
}

async function savedBytes(download: Download): Promise<Buffer> {
  const file = await download.path();
  return readFile(file);
}

test('the downloader fetches every file with a progress bar to 100%, saves them, then completes the session', async () => {
  const { token } = await seedPurchase(h, org.orgId, product, { now: clock() });
  const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 390, height: 844 }, deviceScaleFactor: 2 });
  const page = await context.newPage();
  const cspViolations: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
  });
  const downloads: Download[] = [];
  page.on('download', (download) => downloads.push(download));

  await page.goto(`${base}/d/${token}`);
  await page.locator('#download-all').waitFor({ state: 'visible' }); // shown by the script
  expect(await page.locator('h1').textContent()).toBe('Ebook Pro');
  expect((await page.locator('.file-link').allTextContents()).sort()).toEqual(['Ebook Pro - extras.zip', 'ebook-pro.txt']);
  await page.screenshot({ path: path.join(SCREENSHOTS, 'download-page.png'), fullPage: true });

  // Every value the overall bar takes, from the first click on.
  await page.evaluate(() => {
    const bar = document.getElementById('overall-progress') as HTMLProgressElement;
    const seen: number[] = [];
    (window as unknown as { progressSeen: number[] }).progressSeen = seen;
    const setter = Object.getOwnPropertyDescriptor(HTMLProgressElement.prototype, 'value')!;
    Object.defineProperty(bar, 'value', {
      get: () => setter.get!.call(bar),
      set: (v: number) => { setter.set!.call(bar, v); seen.push(v); },
    });
  });
  await page.locator('#download-all').click();
  await page.locator('#downloader.complete').waitFor({ timeout: 30_000 });

  expect(await page.locator('#overall-progress').isVisible()).toBe(true);
  expect(await page.locator('#overall-progress').evaluate((bar) => (bar as HTMLProgressElement).value)).toBe(100);
  expect(await page.locator('.file-progress').evaluateAll((bars) => bars.map((b) => (b as HTMLProgressElement).value))).toEqual([100, 100]);
  const seen = await page.evaluate(() => (window as unknown as { progressSeen: number[] }).progressSeen);
  expect(seen[seen.length - 1]).toBe(100);
  expect(seen.some((v) => v > 0 && v < 100)).toBe(true); // it moved through the transfer, not in one jump
  expect(await page.locator('#download-status').textContent()).toBe('All files are downloaded.');
  await page.screenshot({ path: path.join(SCREENSHOTS, 'download-page-complete.png'), fullPage: true });

  // Both files saved, byte for byte.
  await eventually(async () => (downloads.length === 2 ? true : undefined));
  const byName = new Map(downloads.map((d) => [d.suggestedFilename(), d]));
  expect(sha256(await savedBytes(byName.get('ebook-pro.txt')!))).toBe(sha256(product.fileBytes));
  expect(sha256(await savedBytes(byName.get('Ebook Pro - extras.zip')!))).toBe(sha256(archive));

  // download-complete was called: the token is used and the session is in the activity log.
  const row = await tokenRow(token);
  expect(row.usedAt).not.toBeNull();
  expect(await h.orm.em.fork().count(ActivityLogEntry, { kind: 'download_session', token: row.id })).toBe(1);
  expect(await h.orm.em.fork().count(ActivityLogEntry, { kind: 'file_download', token: row.id })).toBe(2);
  expect(cspViolations).toEqual([]);

  // Now spent: the page is the 410 with its button.
  const gone = await page.goto(`${base}/d/${token}`);
  expect(gone?.status()).toBe(410);
  await page.screenshot({ path: path.join(SCREENSHOTS, 'link-used-page.png'), fullPage: true });
  await context.close();
});

test('a stamped PDF that comes out smaller than its upload is downloaded whole, in one transfer', async () => {
  // An edited PDF (an incremental update replaced its page's content): its stamped copy keeps only
  // the current objects, a fifth of the upload's size, which the page lists.
  const guide = await seedProduct(h, org.orgId, { name: 'Edited Guide', slug: 'edited-guide' });
  const edited = await readFile(path.join(__dirname, '../fixtures/pdf/edited.pdf'));
  await addVersionFile(h, guide.versionId, 'Edited Guide.pdf', edited);
  await h.orm.em.fork().nativeUpdate(Product, { id: guide.productId }, { stampPdfs: true });
  const { token } = await seedPurchase(h, org.orgId, guide, { now: clock() });
  const context = await browser.newContext({ acceptDownloads: true });
  const page = await context.newPage();
  const downloads: Download[] = [];
  page.on('download', (download) => downloads.push(download));

  await page.goto(`${base}/d/${token}`);
  await page.locator('#download-all').click();
  await page.locator('#downloader.complete').waitFor({ timeout: 20_000 });
  await eventually(async () => (downloads.length === 2 ? true : undefined));
  const saved = await savedBytes(downloads.find((d) => d.suggestedFilename() === 'Edited Guide.pdf')!);
  expect(saved.subarray(0, 5).toString('latin1')).toBe('%PDF-');
  expect(saved.length).toBeLessThan(edited.length);
  const row = await tokenRow(token);
  expect(await h.orm.em.fork().count(ActivityLogEntry, { kind: 'file_download', token: row.id })).toBe(2);
  await context.close();
});

test('trying again after a failure fetches only the files not yet saved', async () => {
  const { token } = await seedPurchase(h, org.orgId, product, { now: clock() });
  const context = await browser.newContext({ acceptDownloads: true });
  const page = await context.newPage();
  const downloads: Download[] = [];
  page.on('download', (download) => downloads.push(download));
  // The session's end refused once (a restart, say): both files are saved by then.
  let refused = 0;
  await page.route('**/download-complete', (route) => (refused++ === 0 ? route.fulfill({ status: 503, body: 'busy' }) : route.fallback()));

  await page.goto(`${base}/d/${token}`);
  await page.locator('#download-all').click();
  await page.getByText(/The download stopped: HTTP 503/).waitFor({ timeout: 20_000 });
  await page.locator('#download-all').click();
  await page.locator('#downloader.complete').waitFor({ timeout: 20_000 });
  await eventually(async () => (downloads.length >= 2 ? true : undefined));
  const row = await tokenRow(token);
  expect(row.usedAt).not.toBeNull();
  expect(await h.orm.em.fork().count(ActivityLogEntry, { kind: 'file_download', token: row.id })).toBe(2);
  expect(downloads).toHaveLength(2);
  await context.close();
});

test('an expired link shows the 410 page with its button', async () => {
  const { token } = await seedPurchase(h, org.orgId, product, { now: clock() });
  offsetMs = h.config.downloadLinks.ttlMs + 3_600_000; // an hour past the link's lifetime
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2 });
  const page = await context.newPage();
  const res = await page.goto(`${base}/d/${token}`);
  expect(res?.status()).toBe(410);
  expect(await page.locator('h1').textContent()).toBe('This download link has expired');
  expect(await page.getByRole('button', { name: 'Email me a fresh link' }).isVisible()).toBe(true);
  await page.screenshot({ path: path.join(SCREENSHOTS, 'link-expired-page.png'), fullPage: true });
  offsetMs = 0;
  await context.close();
});

test('without JavaScript the plain links download the files', async () => {
  const { token } = await seedPurchase(h, org.orgId, product, { now: clock() });
  const context = await browser.newContext({ acceptDownloads: true, javaScriptEnabled: false });
  const page = await context.newPage();
  await page.goto(`${base}/d/${token}`);
  expect(await page.locator('#download-all').isVisible()).toBe(false);
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Ebook Pro - extras.zip' }).click()]);
  expect(download.suggestedFilename()).toBe('Ebook Pro - extras.zip');
  expect(sha256(await savedBytes(download))).toBe(sha256(archive));
  expect((await tokenRow(token)).usedAt).toBeNull(); // no session end without the downloader
  await context.close();
});

test('the /my form on a phone', async () => {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2 });
  const page = await context.newPage();
  await page.goto(`${base}/my`);
  await page.getByLabel('Email').fill('someone@example.com');
  await page.screenshot({ path: path.join(SCREENSHOTS, 'my-page.png'), fullPage: true });
  await page.getByRole('button', { name: 'Email me my links' }).click();
  await page.getByRole('heading', { name: 'Check your email' }).waitFor();
  await context.close();
});
