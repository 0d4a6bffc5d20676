import { randomUUID } from 'node:crypto';
import {
  alertWorkflowId, freshLinksWorkflowId, fulfilLineWorkflowId, fulfilSaleWorkflowId, MAX_WORKFLOW_ID_BYTES, outboundDeliveryWorkflowId,
  revocationWorkflowId, versionNotificationWorkflowId,
} from '../../../src/domain/ids';
import { PURCHASE_SOURCES, type PurchaseSource } from '../../../src/domain/platforms';

// The longest inputs the service accepts: uuids, the longest source word, an order id of 200
// characters (the intake's limit) of three bytes each.
const longestSource = [...PURCHASE_SOURCES].sort((a, b) => b.length - a.length)[0];
const longestOrderId = '€'.repeat(200);
const bytes = (id: string) => Buffer.byteLength(id, 'utf8');
const line = (orgId: string, source: PurchaseSource, externalOrderId: string, productId: string) =>
  fulfilLineWorkflowId({ orgId, source, externalOrderId, productId });

test('every workflow id fits the engine limit of 255 bytes, whatever the order id', () => {
  expect(MAX_WORKFLOW_ID_BYTES).toBe(255);
  const ids = [
    line(randomUUID(), longestSource, longestOrderId, randomUUID()),
    fulfilSaleWorkflowId({ orgId: randomUUID(), source: longestSource, orderKey: longestOrderId, productId: randomUUID() }),
    alertWorkflowId({ orgId: randomUUID(), platform: longestSource, externalOrderId: longestOrderId }),
    revocationWorkflowId({ orgId: randomUUID(), platform: 'reseller-d-classic', orderRef: longestOrderId, deliveryId: randomUUID() }),
    freshLinksWorkflowId({ requestId: randomUUID() }),
    versionNotificationWorkflowId(randomUUID()),
    outboundDeliveryWorkflowId({ eventId: `evt_${'f'.repeat(26)}`, endpointId: randomUUID() }),
  ];
  for (const id of ids) expect(bytes(id)).toBeLessThanOrEqual(255);
});

test('an id that fits is the plain business key, as before (open runs are still joined)', () => {
  expect(line('org', 'storefront-a', '1001', 'prod')).toBe('fulfil/org/storefront-a/1001/prod');
  expect(fulfilSaleWorkflowId({ orgId: 'org', source: 'api', orderKey: 'sale-k', productId: 'prod' })).toBe('fulfil/org/api/sale-k/prod');
  expect(alertWorkflowId({ orgId: 'org', platform: 'cart-e', externalOrderId: 'A-7' })).toBe('alert/org/cart-e/A-7');
  expect(revocationWorkflowId({ orgId: 'org', platform: 'plugin-b', orderRef: '55', deliveryId: 'd' })).toBe('revoke/org/plugin-b/55/d');
  expect(freshLinksWorkflowId({ requestId: 'r' })).toBe('fresh-links/r');
  expect(versionNotificationWorkflowId('v')).toBe('notify/v');
  expect(outboundDeliveryWorkflowId({ eventId: 'evt_1', endpointId: 'e' })).toBe('event/evt_1/e');
});

test('an over-long order id is replaced by its digest: deterministic, and distinct per order', () => {
  const org = randomUUID();
  const product = randomUUID();
  const a = line(org, longestSource, 'a'.repeat(200), product);
  expect(a).toBe(line(org, longestSource, 'a'.repeat(200), product));
  expect(a).not.toBe(line(org, longestSource, `${'a'.repeat(199)}b`, product));
  expect(a).toMatch(new RegExp(`^fulfil/${org}/${longestSource}/sha256-[A-Za-z0-9_-]{43}/${product}$`));
});
