import { randomUUID } from 'node:crypto';
import { alertWorkflowId, fulfilmentWorkflowId, MAX_WORKFLOW_ID_BYTES, revocationWorkflowId } from '../../../src/domain/ids';
import { freshLinksWorkflowId } from '../../../src/domain/fresh-links';
import { versionNotificationWorkflowId } from '../../../src/domain/version-notification';
import { PURCHASE_SOURCES } from '../../../src/domain/platforms';

// The longest inputs the service accepts: uuids, the longest source word, an order id of 200
// characters (the intake's limit) of three bytes each.
const longestSource = [...PURCHASE_SOURCES].sort((a, b) => b.length - a.length)[0];
const longestOrderId = '€'.repeat(200);
const bytes = (id: string) => Buffer.byteLength(id, 'utf8');

test('every workflow id fits the engine limit of 255 bytes, whatever the order id', () => {
  expect(MAX_WORKFLOW_ID_BYTES).toBe(255);
  const ids = [
    fulfilmentWorkflowId(randomUUID(), longestSource, longestOrderId, randomUUID()),
    alertWorkflowId(randomUUID(), longestSource, longestOrderId),
    revocationWorkflowId({ orgId: randomUUID(), platform: 'reseller-d-classic', orderRef: longestOrderId, deliveryId: randomUUID() }),
    freshLinksWorkflowId(randomUUID()),
    versionNotificationWorkflowId(randomUUID()),
  ];
  for (const id of ids) expect(bytes(id)).toBeLessThanOrEqual(255);
});

test('an id that fits is the plain business key, as before (open runs are still joined)', () => {
  expect(fulfilmentWorkflowId('org', 'storefront-a', '1001', 'prod')).toBe('fulfil/org/storefront-a/1001/prod');
  expect(alertWorkflowId('org', 'cart-e', 'A-7')).toBe('alert/org/cart-e/A-7');
  expect(revocationWorkflowId({ orgId: 'org', platform: 'plugin-b', orderRef: '55', deliveryId: 'd' })).toBe('revoke/org/plugin-b/55/d');
});

test('an over-long order id is replaced by its digest: deterministic, and distinct per order', () => {
  const org = randomUUID();
  const product = randomUUID();
  const a = fulfilmentWorkflowId(org, longestSource, 'a'.repeat(200), product);
  expect(a).toBe(fulfilmentWorkflowId(org, longestSource, 'a'.repeat(200), product));
  expect(a).not.toBe(fulfilmentWorkflowId(org, longestSource, `${'a'.repeat(199)}b`, product));
  expect(a).toMatch(new RegExp(`^fulfil/${org}/${longestSource}/sha256-[A-Za-z0-9_-]{43}/${product}$`));
});
