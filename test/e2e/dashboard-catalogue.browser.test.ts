/**
 * The catalogue lifecycle in a real browser (Debian's Chromium through playwright-core, decisions
 * §12): staff map an unknown SKU from the Purchases page to a product and deliver the sales it held
 * back (one receipt each, the counter back to 0), and notify the buyers of a product's new active
 * version while the page follows the progress; members see both without the controls.
 */
import type { Page } from 'playwright-core';
import { ProductVersion } from '../../src/db/entities';
import type { Harness } from '../helpers/harness';
import { seedProduct, seedUser, type SeededProduct } from '../helpers/seed';
import { addVersionFile, seedPurchase } from '../helpers/download-links';
import { screenshot, signInAs, useDashboardBrowser } from '../helpers/browser';
import { edit, finalEntry, orderBody, send, seedWebhookOrg, withEmail, type WebhookOrg } from '../helpers/webhooks';

jest.setTimeout(180_000);

const PASSWORD = 'correct horse battery';
/** An SKU with markup, quotes, an ampersand and a slash: shown as text, sent URL-encoded. */
const SKU = 'DK <2026> & "bundle"/v2';

let h: Harness;
let base: string;
let page: Page;
let org: WebhookOrg;
let admin: { email: string };
let member: { email: string };
let pageErrors: string[] = [];

useDashboardBrowser({
  // One notice a second: the page has time to show a notification running before it is done.
  harness: { env: { UPDATE_NOTICE_RATE: '1' } },
  started: (world) => ({ h, base } = world),
  opened: (opened) => ({ page, pageErrors } = opened),
});

beforeAll(async () => {
  org = await seedWebhookOrg(h, { platforms: ['storefront-a', 'cart-e'], name: 'Acme Books' });
  admin = await seedUser(h, org.orgId, 'admin');
  member = await seedUser(h, org.orgId, 'member');
});

/** storefront-a's sample with its ebook-pro line sold under `sku` (its course-basic line stays known). */
function storefrontOrder(orderId: string, email: string, sku: string): Buffer {
  const body = withEmail('storefront-a', orderBody('storefront-a', org.orgId, orderId), email);
  return edit(body, '"sku": "ebook-pro"', `"sku": ${JSON.stringify(sku).replace(/\$/g, '$$$$')}`);
}

/** cart-e's sample (one product a ping) sold under `sku`. */
function cartOrder(orderId: string, email: string, sku: string): Buffer {
  const body = withEmail('cart-e', orderBody('cart-e', org.orgId, orderId), email);
  return edit(body, '&permalink=ebook-pro&', `&permalink=${encodeURIComponent(sku)}&`);
}

/** Sends a signed order and waits until its entry is final (the unknown line `unmatched`). */
async function sendFinal(platform: 'storefront-a' | 'cart-e', body: Buffer): Promise<string> {
  const sent = await send(base, platform, org.orgId, body);
  expect(sent.status).toBe(200);
  const deliveryId = sent.body.deliveryIds![0];
  await finalEntry(h, deliveryId);
  return deliveryId;
}

/** Another version (ready, one file) of a seeded product, not active yet. */
async function addVersion(product: SeededProduct, label: string): Promise<string> {
  const em = h.orm.em.fork();
  const version = em.create(ProductVersion, { product: product.productId, version: label });
  await em.flush();
  await addVersionFile(h, version.id, `guide-${label}.pdf`, Buffer.from(`version ${label}\n`));
  return version.id;
}

const held = (sku: string) => h.orm.em.fork().execute<Array<{ outcome: string | null; product_id: string | null }>>(
  `select i.outcome, i.product_id from webhook_delivery_item i join webhook_delivery d on d.id = i.delivery_id
   where d.organisation_id = ? and lower(btrim(i.sku)) = lower(btrim(?))`,
  [org.orgId, sku],
);

test('an admin maps an unknown SKU to a product from the Purchases page and delivers the sales it held back', async () => {
  const designKit = await seedProduct(h, org.orgId, { slug: 'design-kit', name: 'Design Kit' });
  // Two sales of the unknown SKU, from two platforms, one of them in another case.
  await sendFinal('storefront-a', storefrontOrder('5901000000101', 'ada@example.com', SKU));
  await sendFinal('cart-e', cartOrder('sale-dk-101', 'cy@example.com', SKU.toLowerCase()));
  // storefront-a's known line went out at once.
  await h.mailbox.waitFor((m) => m.to.includes('ada@example.com') && m.subject === 'Your download: Course Basic', 30_000);

  await signInAs(page, base, admin.email, PASSWORD);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Purchases' }).click();
  await expect(page.getByTestId('unmatched-total').textContent()).resolves.toBe('2');
  const rows = page.locator('#unmatched tbody tr');
  await expect(rows.count()).resolves.toBe(2);
  await expect(rows.locator('code').allTextContents()).resolves.toEqual(expect.arrayContaining([SKU, SKU.toLowerCase()]));
  const link = page.locator('#unmatched tr', { hasText: 'storefront-a' }).getByRole('link', { name: /^Map and deliver/ });
  await expect(link.getAttribute('href')).resolves.toBe(`/unmatched?sku=${encodeURIComponent(SKU)}`);
  await link.click();

  // The SKU's page: the sales it held, before mapping no deliver button.
  await page.getByRole('heading', { level: 1, name: 'Unmatched SKU' }).waitFor();
  await expect(page.getByTestId('sku').textContent()).resolves.toBe(SKU);
  await expect(page.getByTestId('mapped-to').textContent()).resolves.toContain('Maps to no product yet.');
  await expect(page.getByTestId('held-count').textContent()).resolves.toBe('2');
  const sales = page.getByTestId('held-sales').locator('tbody tr');
  await expect(sales.count()).resolves.toBe(2);
  await expect(sales.nth(0).textContent()).resolves.toMatch(/storefront-a.*5901000000101.*ada@example\.com.*deliverable/s);
  await expect(sales.nth(1).textContent()).resolves.toMatch(/cart-e.*sale-dk-101.*cy@example\.com.*deliverable/s);
  await expect(page.getByRole('button', { name: /^Deliver these/ }).count()).resolves.toBe(0);

  // Map it to Design Kit: the page reloads with the product named and the deliver button.
  await page.getByRole('combobox', { name: /^Product/ }).selectOption({ label: 'Design Kit (design-kit)' });
  await Promise.all([page.waitForEvent('load'), page.getByRole('button', { name: 'Map to product' }).click()]);
  await expect(page.getByTestId('mapped-to').textContent()).resolves.toMatch(/Maps to Design Kit\s+live/);
  await expect(page.getByTestId('held-count').textContent()).resolves.toBe('2');
  const extra = await h.orm.em.fork().execute<Array<{ product_id: string }>>(
    'select product_id from product_sku where organisation_id = ? and sku = ?', [org.orgId, SKU.toLowerCase()],
  );
  expect(extra).toEqual([{ product_id: designKit.productId }]);
  const deliver = page.getByRole('button', { name: 'Deliver these (2)' });
  await deliver.waitFor();
  await screenshot(page, 'unmatched-sku');

  // Deliver: the page says how many, then reloads without them.
  // The message shows for 400 ms before the reload: watched from before the click, so a busy
  // machine's polling cannot miss it.
  const reloaded = page.waitForEvent('load');
  const said = page.evaluate((text) => new Promise<void>((resolve) => {
    const seen = () => document.body.innerText.includes(text);
    if (seen()) return resolve();
    new MutationObserver((_, observer) => {
      if (seen()) { observer.disconnect(); resolve(); }
    }).observe(document.body, { subtree: true, childList: true, characterData: true });
  }), '2 sales are being delivered.');
  await deliver.click();
  await said;
  await reloaded;
  await expect(page.getByTestId('held-count').textContent()).resolves.toBe('0');
  await page.getByText('No sale is held back by this SKU now.').waitFor();

  // One receipt each, for Design Kit; the lines end fulfilled as Design Kit.
  for (const buyer of ['ada@example.com', 'cy@example.com']) {
    await h.mailbox.waitFor((m) => m.to.includes(buyer) && m.subject === 'Your download: Design Kit', 30_000);
  }
  for (let i = 0; i < 150 && (await held(SKU)).some((item) => item.outcome !== 'fulfilled'); i += 1) await new Promise((r) => setTimeout(r, 100));
  expect(await held(SKU)).toEqual([
    { outcome: 'fulfilled', product_id: designKit.productId }, { outcome: 'fulfilled', product_id: designKit.productId },
  ]);

  // Delivering again sends nothing (same session, the API straight).
  const csrf = await page.locator('body').getAttribute('data-csrf');
  const again = await page.request.post(`${base}/api/unmatched-skus/${encodeURIComponent(SKU)}/deliver`, { headers: { 'x-csrf-token': csrf! } });
  expect(again.status()).toBe(200);
  expect(await again.json()).toMatchObject({ delivering: 0, notDeliverable: 0 });

  // The counter is back to 0 and the purchases are listed.
  await page.getByRole('link', { name: 'Back to Purchases' }).click();
  await expect(page.getByTestId('unmatched-total').textContent()).resolves.toBe('0');
  await page.getByText('Every SKU your platforms sent maps to a product.').waitFor();
  await expect(page.locator('#purchase-list tr', { hasText: 'Design Kit' }).count()).resolves.toBe(2);
  // Receipts are marked sent just after they go out.
  const sentBadges = page.locator('#purchase-list tr', { hasText: 'Design Kit' }).locator('.badge-sent');
  for (let i = 0; i < 50 && (await sentBadges.count()) < 2; i += 1) {
    await new Promise((r) => setTimeout(r, 200));
    await page.reload();
  }
  await expect(sentBadges.count()).resolves.toBe(2);
  await screenshot(page, 'unmatched-delivered');
  const receipts = h.mailbox.messages().filter((m) => m.subject === 'Your download: Design Kit');
  expect(receipts.map((m) => m.to).sort()).toEqual([['ada@example.com'], ['cy@example.com']]);
  expect(pageErrors).toEqual([]);
});

test('an admin notifies the buyers of a new active version and watches the notices go out', async () => {
  const guide = await seedProduct(h, org.orgId, { slug: 'field-guide', name: 'Field Guide' });
  const buyers = ['b1@example.com', 'b2@example.com', 'b3@example.com', 'b4@example.com'];
  for (const email of buyers) await seedPurchase(h, org.orgId, guide, { email });
  const revoked = await seedPurchase(h, org.orgId, guide, { email: 'gone@example.com' });
  await h.orm.em.fork().execute(`update purchase set revoked_at = now(), revoke_reason = 'refund' where id = ?`, [revoked.purchaseId]);
  await addVersion(guide, '2.0.0');

  await signInAs(page, base, admin.email, PASSWORD);
  await page.goto(`${base}/products/${guide.productId}`);
  // Its first version is nothing new to its buyers: no button yet.
  const notices = page.locator('#version-notices');
  await expect(page.getByTestId('would-email').textContent()).resolves.toMatch(/^Version 1\.0\.0 is the first/);
  await expect(notices.getByRole('button', { name: /^Notify/ }).count()).resolves.toBe(0);
  await expect(notices.textContent()).resolves.toContain('No buyer was notified of a version yet.');

  // Make 2.0.0 active: the button now announces it.
  await page.locator('tr[data-version="2.0.0"]').getByRole('button', { name: 'Make active' }).click();
  await page.getByText('The active version was changed.').waitFor();
  const notify = notices.getByRole('button', { name: 'Notify 4 buyers of version 2.0.0' });
  await notify.waitFor();

  // Notify (after the confirmation): the page reloads and follows the progress without reloading again.
  let question = '';
  page.once('dialog', (dialog) => { question = dialog.message(); void dialog.accept(); });
  await Promise.all([page.waitForEvent('load'), notify.click()]);
  expect(question).toMatch(/^Email 4 buyers that version 2\.0\.0 of Field Guide is out/);
  await page.evaluate(() => { (window as unknown as { stayed: boolean }).stayed = true; });
  await expect(page.getByTestId('notified').textContent()).resolves.toMatch(/^Buyers were notified of this version \(2\.0\.0\)/);
  await expect(notices.getByRole('button', { name: /^Notify/ }).count()).resolves.toBe(0);
  const row = notices.locator('tbody tr');
  await expect(row.getAttribute('data-status')).resolves.toBe('running');
  await expect(notices.getAttribute('hx-trigger')).resolves.toBe('every 2s');

  await page.locator('#version-notices tr[data-status="done"]').waitFor({ timeout: 30_000 });
  await expect(page.evaluate(() => (window as unknown as { stayed?: boolean }).stayed)).resolves.toBe(true);
  await expect(row.getByTestId('notice-sent').textContent()).resolves.toBe('4');
  await expect(row.getByTestId('notice-left').textContent()).resolves.toBe('0');
  await expect(row.locator('progress').getAttribute('value')).resolves.toBe('4');
  await expect(page.getByTestId('notified').textContent()).resolves.toContain('4 emailed.');
  await expect(page.locator('#version-notices').getAttribute('hx-trigger')).resolves.toBeNull();
  await screenshot(page, 'product-notify');

  // One notice each, none for the revoked purchase.
  const notice = (m: { subject: string }) => m.subject === 'New version of Field Guide: 2.0.0';
  for (const email of buyers) await h.mailbox.waitFor((m) => notice(m) && m.to.includes(email), 10_000);
  expect(h.mailbox.messages().filter(notice).map((m) => m.to[0]).sort()).toEqual(buyers);

  // A reload shows the same, and no button.
  await page.reload();
  await expect(page.locator('#version-notices tbody tr').getAttribute('data-status')).resolves.toBe('done');
  await expect(page.getByRole('button', { name: /^Notify/ }).count()).resolves.toBe(0);
  expect(pageErrors).toEqual([]);
});

test('a member sees the held sales and the notices without the map, deliver and notify controls', async () => {
  const handbook = await seedProduct(h, org.orgId, { slug: 'handbook', name: 'Handbook' });
  await seedPurchase(h, org.orgId, handbook, { email: 'reader@example.com' });
  const second = await addVersion(handbook, '2.0.0');
  await h.orm.em.fork().execute('update product set active_version_id = ? where id = ?', [second, handbook.productId]);
  const sku = 'MEMBER-ONLY-SKU';
  await sendFinal('cart-e', cartOrder('sale-mo-201', 'mo@example.com', sku));

  await signInAs(page, base, member.email, PASSWORD);
  await page.goto(`${base}/purchases`);
  await expect(page.getByTestId('unmatched-total').textContent()).resolves.not.toBe('0');
  await expect(page.locator('#unmatched').getByRole('link', { name: /^Map and deliver/ }).count()).resolves.toBe(0);
  await page.locator('#unmatched tr', { hasText: sku }).getByRole('link', { name: /^Held sales/ }).click();
  await page.getByRole('heading', { level: 1, name: 'Unmatched SKU' }).waitFor();
  await expect(page.getByTestId('held-count').textContent()).resolves.toBe('1');
  await expect(page.getByTestId('mapped-to').textContent()).resolves.toContain('An owner or admin can map it to one.');
  await expect(page.locator('select, form[data-json]').count()).resolves.toBe(0);
  await expect(page.getByRole('button', { name: /Map to product|^Deliver/ }).count()).resolves.toBe(0);

  // The API refuses a member all the same.
  const csrf = await page.locator('body').getAttribute('data-csrf');
  const map = await page.request.post(`${base}/api/unmatched-skus/${sku}/map`, {
    headers: { 'x-csrf-token': csrf! }, data: { productId: handbook.productId },
  });
  expect(map.status()).toBe(403);

  // The product page says who a notice would email, without the button.
  await page.goto(`${base}/products/${handbook.productId}`);
  await expect(page.getByTestId('would-email').textContent()).resolves.toBe(
    'A notice of version 2.0.0 would email 1 buyer. An owner or admin can send it.',
  );
  await expect(page.getByRole('button', { name: /^Notify/ }).count()).resolves.toBe(0);
  await expect(page.locator('form[data-json]').count()).resolves.toBe(0);

  // An SKU nobody sent is a 404 page.
  const res = await page.goto(`${base}/unmatched?sku=${encodeURIComponent('never-sent')}`);
  expect(res?.status()).toBe(404);
  expect(pageErrors).toEqual([]);
});
