/**
 * The webhook log in a real browser after real signed deliveries: the integration secret is set in
 * Settings, the platform's signed webhooks arrive over HTTP, and a held order is recorded by hand
 * from the log once its product is live (decisions §3 `source` + `externalOrderId`).
 */
import type { Browser, Page } from 'playwright-core';
import type { FastifyInstance } from 'fastify';
import { Purchase } from '../../src/db/entities';
import { startHarness, type Harness } from '../helpers/harness';
import { seedOrganisation, seedProduct } from '../helpers/seed';
import { signFor } from '../fixtures/platforms';
import { webhookSample } from '../fixtures/samples';
import { launchBrowser, listenDashboard, screenshot, signInAs, TEMPORAL_UI_URL } from '../helpers/browser';

jest.setTimeout(180_000);

const SECRET = 'test-secret-storefront-a';
const SAMPLE = webhookSample('storefront-a.json');
const SAMPLE_ORDER = '5901000000001';

let h: Harness;
let app: FastifyInstance;
let base: string;
let browser: Browser;
let page: Page;
let orgId: string;
let ownerEmail: string;
let courseId: string;

beforeAll(async () => {
  h = await startHarness();
  ({ app, base } = await listenDashboard(h));
  const org = await seedOrganisation(h, { name: 'Olive Books' });
  orgId = org.orgId;
  ownerEmail = (await h.orm.em.fork().execute<Array<{ email: string }>>('select email from app_user where id = ?', [org.userId]))[0].email;
  await seedProduct(h, orgId, { slug: 'ebook-pro', name: 'Ebook Pro' });
  // Uploaded but not published yet: its sales are held.
  courseId = (await seedProduct(h, orgId, { slug: 'course-basic', name: 'Course Basic', status: 'draft' })).productId;
  browser = await launchBrowser();
  page = await (await browser.newContext({ viewport: { width: 1280, height: 860 } })).newPage();
  await signInAs(page, base, ownerEmail, 'correct horse battery');
});
afterAll(async () => {
  await browser?.close();
  await app?.close();
  await h?.close();
});

/** POSTs a storefront-a order over HTTP, signed with the store's secret as the platform does. */
async function deliver(body: Buffer): Promise<{ status: number; deliveryIds: string[] }> {
  const { headers } = signFor('storefront-a', body, { secret: SECRET });
  const res = await fetch(`${base}/webhooks/${orgId}/storefront-a`, {
    method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: new Uint8Array(body),
  });
  const json = (await res.json()) as { deliveryIds?: string[] };
  return { status: res.status, deliveryIds: json.deliveryIds ?? [] };
}

/** Waits until a delivery leaves Pending (its workflows report the outcomes a moment later). */
async function finished(deliveryId: string): Promise<{ status: string; workflow_ids: string[] }> {
  for (let i = 0; i < 300; i += 1) {
    const [row] = await h.orm.em.fork().execute<Array<{ status: string; workflow_ids: string[] }>>(
      'select status, workflow_ids from webhook_delivery where id = ?', [deliveryId],
    );
    if (row && row.status !== 'Pending') return row;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`delivery ${deliveryId} stayed Pending`);
}

const heldOrder = (orderId: string) => Buffer.from(JSON.stringify({
  id: Number(orderId), email: 'hal@example.com', currency: 'USD', financial_status: 'paid', test: false,
  customer: { first_name: 'Hal', last_name: 'Held' },
  line_items: [{ sku: 'course-basic', quantity: 1, price: '29.00' }],
}));

test('the storefront secret is set in Settings; until then deliveries are refused', async () => {
  expect((await deliver(SAMPLE)).status).toBe(401);
  await page.goto(`${base}/settings/integrations`);
  const panel = page.locator('section[data-platform="storefront-a"]');
  await expect(panel.getByLabel('Webhook URL', { exact: true }).inputValue()).resolves.toBe(`${h.config.baseUrl}/webhooks/${orgId}/storefront-a`);
  await expect(panel.getByRole('heading').textContent()).resolves.toContain('not configured');
  await panel.getByLabel('Webhook signing secret').fill(SECRET);
  await panel.getByRole('button', { name: 'Set secret' }).click();
  await panel.getByText('Saved: the storefront-a integration is configured.').waitFor();
  await page.reload();
  await expect(panel.getByRole('heading').textContent()).resolves.toMatch(/storefront-a\s+configured/);
  await expect(panel.getByRole('button', { name: 'Rotate secret' }).count()).resolves.toBe(1);
  await screenshot(page, 'settings-integrations');
});

test('a real signed delivery shows in the log with its items, reasons, badges and Temporal link', async () => {
  const sent = await deliver(SAMPLE);
  expect(sent.status).toBe(200);
  const delivery = await finished(sent.deliveryIds[0]);
  expect(delivery.status).toBe('Success');

  await page.goto(`${base}/webhooks-log`);
  const row = page.locator(`tr[data-delivery-id="${sent.deliveryIds[0]}"]`);
  await expect(row.textContent()).resolves.toContain(SAMPLE_ORDER);
  await expect(row.locator('.badge').first().textContent()).resolves.toBe('Success');
  const ebook = row.locator('li[data-sku="ebook-pro"]');
  await expect(ebook.textContent()).resolves.toMatch(/Ebook Pro\s+fulfilled/);
  const course = row.locator('li[data-sku="course-basic"]');
  await expect(course.textContent()).resolves.toMatch(/held/);
  await expect(course.textContent()).resolves.toMatch(/draft/);
  // Not live yet: the log says what to do instead of offering the form.
  await course.getByText('the sale can be recorded here by hand').waitFor();

  const link = row.getByRole('link', { name: /Open in Temporal/ });
  await expect(link.getAttribute('href')).resolves.toBe(
    `${TEMPORAL_UI_URL}/namespaces/default/workflows/${encodeURIComponent(delivery.workflow_ids[0])}`,
  );

  // Filters: by status and by platform, without a page load.
  await page.getByLabel('Status').selectOption('held');
  await page.getByText('No deliveries match.').waitFor();
  expect(page.url()).toContain('status=held');
  await page.getByLabel('Status').selectOption('Success');
  await page.getByLabel('Platform').selectOption('storefront-a');
  await row.waitFor();
  await page.getByLabel('Platform').selectOption('cart-e');
  await page.getByText('No deliveries match.').waitFor();
});

test('a held entry is recorded by hand from the log once its product is live, and a redelivery is a duplicate', async () => {
  const sent = await deliver(heldOrder('5901000000002'));
  expect(sent.status).toBe(200);
  expect((await finished(sent.deliveryIds[0])).status).toBe('held');

  // Publish the product in the browser.
  await page.goto(`${base}/products/${courseId}`);
  await page.getByRole('button', { name: 'Publish' }).click();
  await page.getByText('Published.').waitFor();

  await page.goto(`${base}/webhooks-log?status=held`);
  const row = page.locator(`tr[data-delivery-id="${sent.deliveryIds[0]}"]`);
  await expect(row.locator('.badge').first().textContent()).resolves.toBe('held');
  await row.getByText('Record this sale by hand').click();
  await row.getByLabel('Customer email').fill('hal@example.com');
  await row.getByLabel('Customer name').fill('Hal Held');
  await row.getByLabel(/^Amount/).fill('29.00');
  await screenshot(page, 'webhook-log-record-by-hand');
  await row.getByRole('button', { name: 'Record the sale' }).click();
  const created = row.locator('.purchase-created');
  await created.waitFor();
  const purchaseId = await created.getAttribute('data-purchase-id');

  const mail = await h.mailbox.waitFor((m) => m.to.includes('hal@example.com'), 30_000);
  expect(mail.subject).toContain('Course Basic');
  const purchase = await h.orm.em.fork().findOneOrFail(Purchase, purchaseId!, { populate: ['product'] });
  expect(purchase.source).toBe('storefront-a');
  expect(purchase.externalOrderId).toBe('5901000000002');
  expect(purchase.product.id).toBe(courseId);

  // The log now says it is recorded, and does not offer the form again.
  await page.reload();
  await row.getByText(/^Recorded:/).waitFor();
  await expect(row.getByText('Record this sale by hand').count()).resolves.toBe(0);

  // The platform delivers the same order again: one purchase, one receipt, a duplicate.
  const again = await deliver(heldOrder('5901000000002'));
  expect((await finished(again.deliveryIds[0])).status).toBe('Success');
  const outcomes = await h.orm.em.fork().execute<Array<{ outcome: string }>>(
    'select outcome from webhook_delivery_item where delivery_id = ?', [again.deliveryIds[0]],
  );
  expect(outcomes).toEqual([{ outcome: 'duplicate' }]);
  const purchases = await h.orm.em.fork().count(Purchase, { organisation: orgId, source: 'storefront-a', externalOrderId: '5901000000002' });
  expect(purchases).toBe(1);
});

test('an unknown SKU is flagged in the log and counted on the Purchases page and the Overview', async () => {
  const body = Buffer.from(JSON.stringify({
    id: 5901000000003, email: 'who@example.com', currency: 'USD', financial_status: 'paid',
    line_items: [{ sku: 'MYSTERY-SKU', quantity: 1, price: '5.00' }],
  }));
  const sent = await deliver(body);
  expect((await finished(sent.deliveryIds[0])).status).toBe('Error');

  await page.goto(`${base}/webhooks-log`);
  const row = page.locator(`tr[data-delivery-id="${sent.deliveryIds[0]}"]`);
  await expect(row.locator('.badge').allTextContents()).resolves.toEqual(['Error', 'unmatched', 'unmatched']);
  await screenshot(page, 'webhook-log');

  await page.goto(`${base}/purchases`);
  await expect(page.getByTestId('unmatched-total').textContent()).resolves.toBe('1');
  await page.locator('#unmatched tr', { hasText: 'MYSTERY-SKU' }).waitFor();

  await page.goto(`${base}/`);
  await expect(page.getByTestId('unmatched-count').textContent()).resolves.toBe('1');
  // Finished deliveries: two Success, one Error.
  await expect(page.getByTestId('success-rate').textContent()).resolves.toBe('66.7 %');
  await screenshot(page, 'overview');
});
