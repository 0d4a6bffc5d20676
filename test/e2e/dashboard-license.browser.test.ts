/**
 * The purchase page's License key section in a real browser (Debian's Chromium through
 * playwright-core): the key, its seats and installations; an admin's Deactivate frees a seat
 * (decisions §14), and the app on that installation no longer validates.
 */
import type { Page } from 'playwright-core';
import { LicenseKey } from '../../src/db/entities';
import type { Harness } from '../helpers/harness';
import { seedOrganisation, seedProduct, seedUser } from '../helpers/seed';
import { screenshot, signInAs, useDashboardBrowser } from '../helpers/browser';
import { eventually } from '../helpers/webhooks';

jest.setTimeout(180_000);

const PASSWORD = 'correct horse battery';

let h: Harness;
let base: string;
let page: Page;
let pageErrors: string[] = [];
let admin: { email: string; apiKey: string };
let purchaseId: string;
let key: string;
const instances: Record<string, string> = {};

useDashboardBrowser({
  harness: { worker: false },
  started: (world) => ({ h, base } = world),
  opened: (opened) => ({ page, pageErrors } = opened),
});

beforeAll(async () => {
  const { orgId } = await seedOrganisation(h, { name: 'Acme Apps' });
  admin = await seedUser(h, orgId, 'admin');
  const auth = { authorization: `Bearer ${admin.apiKey}` };
  const { productId } = await seedProduct(h, orgId, { name: 'Photo Tool' });
  const put = await h.app.inject({
    method: 'PUT', url: `/api/products/${productId}`, headers: auth, payload: { licenseKeys: { source: 'generated', activationLimit: 3 } },
  });
  expect(put.statusCode).toBe(200);
  const sale = await h.app.inject({
    method: 'POST', url: '/api/purchases', headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({
      customerId: 'new', 'newCustomer.email': 'pat@example.com', productId, amount: '25', currency: 'usd', paymentMethod: 'custom', sendEmail: 'false',
    }).toString(),
  });
  expect(sale.statusCode).toBe(201);
  purchaseId = /data-purchase-id="([^"]+)"/.exec(sale.body)![1];
  key = await eventually(async () => (await h.orm.em.fork().findOne(LicenseKey, { purchase: purchaseId }))?.key, 10_000, 'the key');
  for (const name of ['Studio iMac', 'Travel laptop']) {
    const res = await h.app.inject({ method: 'POST', url: '/licenses/activate', payload: { key, instanceName: name } });
    expect(res.statusCode).toBe(201);
    instances[name] = res.json().instanceId;
  }
});

test('the purchase page shows the key and its installations, and Deactivate frees a seat', async () => {
  await signInAs(page, base, admin.email, PASSWORD);
  await page.goto(`${base}/purchases/${purchaseId}`);
  const section = page.getByTestId('license');
  await section.getByRole('heading', { name: 'License key' }).waitFor();
  await expect(page.getByTestId('license-key').textContent()).resolves.toBe(key);
  await expect(page.getByTestId('license-status').textContent()).resolves.toContain('active');
  await expect(page.getByTestId('license-seats').textContent()).resolves.toBe('2 of 3');
  const rows = page.getByTestId('license-activations').locator('tbody tr');
  await expect(rows.count()).resolves.toBe(2);
  await expect(rows.nth(0).textContent()).resolves.toContain('Studio iMac');
  await expect(rows.nth(0).textContent()).resolves.toContain(instances['Studio iMac']);
  await screenshot(page, 'purchase-license');

  page.once('dialog', (dialog) => void dialog.accept());
  await Promise.all([page.waitForEvent('load'), rows.nth(0).getByRole('button', { name: 'Deactivate' }).click()]);
  await expect(page.getByTestId('license-seats').textContent()).resolves.toBe('1 of 3');
  await expect(rows.count()).resolves.toBe(1);
  await expect(rows.nth(0).textContent()).resolves.toContain('Travel laptop');

  const validated = await h.app.inject({ method: 'POST', url: '/licenses/validate', payload: { key, instanceId: instances['Studio iMac'] } });
  expect(validated.json()).toMatchObject({ valid: false, activations: { limit: 3, used: 1 } });
  expect(pageErrors).toEqual([]);
});
