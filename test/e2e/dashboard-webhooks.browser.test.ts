/**
 * Settings › Webhooks in a real browser (Debian's Chromium through playwright-core): an admin adds
 * an endpoint and sees its secret once, sends a test and sees the attempt, disables and enables it,
 * and redelivers an event; the receiver is a real HTTP server that verifies with standardwebhooks.
 */
import type { Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import type { Harness } from '../helpers/harness';
import { seedOrganisation, seedProduct, seedUser } from '../helpers/seed';
import { seedPurchase } from '../helpers/download-links';
import { screenshot, signInAs, useDashboardBrowser } from '../helpers/browser';
import { startReceiver, type Receiver } from '../helpers/receivers';
import { eventually } from '../helpers/webhooks';

jest.setTimeout(180_000);

const PASSWORD = 'correct horse battery';

let h: Harness;
let base: string;
let page: Page;
let pageErrors: string[] = [];
let receiver: Receiver;
let orgId: string;
let admin: { email: string };
let member: { email: string };

useDashboardBrowser({
  harness: { env: { OUTBOUND_WEBHOOKS_ALLOW_PRIVATE: 'true' } },
  started: (world) => ({ h, base } = world),
  opened: (opened) => {
    ({ page, pageErrors } = opened);
    page.on('dialog', (dialog) => void dialog.accept());
  },
});

beforeAll(async () => {
  ({ orgId } = await seedOrganisation(h, { name: 'Acme Books' }));
  admin = await seedUser(h, orgId, 'admin');
  member = await seedUser(h, orgId, 'member');
  receiver = await startReceiver(() => ({ status: 200, body: '{"received":true}' }));
});
afterAll(async () => {
  await receiver?.close();
});

const panel = () => page.locator('section[data-endpoint]');

test('add an endpoint, see the secret once, send a test, see the attempt, disable, enable, redeliver', async () => {
  await signInAs(page, base, admin.email, PASSWORD);
  await page.goto(`${base}/settings/webhooks`);
  await page.getByRole('heading', { level: 1, name: 'Settings: Webhooks' }).waitFor();
  await page.getByLabel('URL').fill(receiver.url);
  await page.getByLabel('Description').fill('Our CRM');
  await page.getByRole('button', { name: 'Add endpoint' }).click();
  const secretBox = page.locator('#new-secret');
  await secretBox.waitFor({ state: 'visible' });
  const secret = (await secretBox.textContent()) ?? '';
  expect(secret).toMatch(/^whsec_/);
  await screenshot(page, 'webhooks-secret');

  // Shown once: the page afterwards lists the endpoint without it.
  await page.reload();
  await expect(panel().count()).resolves.toBe(1);
  expect(await page.content()).not.toContain(secret);

  await panel().getByRole('button', { name: 'Send test' }).click();
  await page.locator('tr[data-attempt]').first().waitFor();
  expect(await page.locator('tr[data-attempt]').first().textContent()).toMatch(/ping[\s\S]*200[\s\S]*received/);
  expect(receiver.received).toHaveLength(1);
  const wh = new Webhook(secret);
  expect(() => wh.verify(receiver.received[0].body, receiver.received[0].headers as Record<string, string>)).not.toThrow();

  // A sale: its purchase.created event is delivered and shows in the attempts.
  const product = await seedProduct(h, orgId, { name: 'Ebook Pro' });
  await seedPurchase(h, orgId, product);
  await eventually(async () => (receiver.received.length === 2 ? true : undefined), 60_000, 'the purchase event');
  const eventId = receiver.received[1].id;
  await eventually(async () => ((await h.orm.em.fork().execute(
    `select 1 from outbound_attempt where event_id = ?`, [eventId],
  )).length === 1 ? true : undefined), 30_000, 'the attempt logged');
  await page.reload();
  await page.locator('tr[data-attempt]', { hasText: 'purchase.created' }).waitFor();
  await screenshot(page, 'webhooks-attempts');

  await panel().getByRole('button', { name: 'Disable' }).click();
  await panel().getByText('disabled', { exact: true }).waitFor();
  await expect(page.locator('tr[data-attempt]', { hasText: 'purchase.created' }).getByRole('button', { name: 'Redeliver' }).isDisabled()).resolves.toBe(true);
  await panel().getByRole('button', { name: 'Enable' }).click();
  await panel().getByText('enabled', { exact: true }).waitFor();

  await page.locator('tr[data-attempt]', { hasText: 'purchase.created' }).getByRole('button', { name: 'Redeliver' }).click();
  await eventually(async () => (receiver.received.length === 3 ? true : undefined), 60_000, 'the redelivery');
  expect(receiver.received[2].id).toBe(eventId);
  expect(() => wh.verify(receiver.received[2].body, receiver.received[2].headers as Record<string, string>)).not.toThrow();
  expect(pageErrors).toEqual([]);
});

test('the events an endpoint gets are picked when it is added and changed later; none ticked is every type', async () => {
  await signInAs(page, base, admin.email, PASSWORD);
  await page.goto(`${base}/settings/webhooks`);
  const url = `${receiver.url}/picked`;
  const addForm = page.locator('section[aria-labelledby="add-endpoint-heading"]');
  await addForm.getByLabel('URL').fill(url);
  await addForm.getByLabel('purchase.revoked').check();
  await addForm.getByLabel('delivery.failed').check();
  await page.getByRole('button', { name: 'Add endpoint' }).click();
  await page.locator('#new-secret').waitFor({ state: 'visible' });
  const eventsOf = async () => ((await h.orm.em.fork().execute<Array<{ events: string[] }>>(
    'select events from webhook_endpoint where url = ?', [url],
  ))[0]?.events);
  expect(await eventsOf()).toEqual(['purchase.revoked', 'delivery.failed']);

  await page.reload();
  const picked = page.locator('section[data-endpoint]', { hasText: url });
  await expect(picked.getByText('Events: purchase.revoked, delivery.failed.').count()).resolves.toBe(1);
  await picked.getByText('Change the events sent').click();
  await expect(picked.getByLabel('purchase.revoked').isChecked()).resolves.toBe(true);
  await expect(picked.getByLabel('purchase.created').isChecked()).resolves.toBe(false);
  await picked.getByLabel('purchase.revoked').uncheck();
  await picked.getByLabel('delivery.failed').uncheck();
  await screenshot(page, 'webhooks-event-types');
  await picked.getByRole('button', { name: 'Save events' }).click();
  await picked.getByText('Events saved.').waitFor();
  expect(await eventsOf()).toEqual([]);
  await page.waitForURL(`${base}/settings/webhooks`);
  await page.locator('section[data-endpoint]', { hasText: url }).getByText('Events: all.', { exact: false }).waitFor();
  expect(pageErrors).toEqual([]);
});

test('members do not see Settings › Webhooks', async () => {
  await signInAs(page, base, member.email, PASSWORD);
  const res = await page.goto(`${base}/settings/webhooks`);
  expect(res?.status()).toBe(403);
  await page.goto(`${base}/settings/api-key`);
  await expect(page.getByRole('link', { name: 'Webhooks' }).count()).resolves.toBe(0);
});
