/**
 * Two steps of every sale's run are one database call each (the receipt check, and reporting the
 * items' outcomes). Each takes a lock and must then read what the lock's holder committed: these
 * tests hold the lock in a transaction of their own, start the call, commit, and check that the
 * call saw the commit.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { reportItemOutcomes } from '../../src/deliveries/delivery-store';
import { leaveRevocationNotice, lockOrderRevocations, withdrawBeforeReceipt } from '../../src/purchases/revocation-store';
import { recordItemOutcomes } from '../../src/services/delivery-log';
import { seedPurchase } from '../helpers/download-links';
import { startHarness, type Harness } from '../helpers/harness';
import { seedOrganisation, seedProduct, type SeededProduct } from '../helpers/seed';

let h: Harness;
let orgId: string;
let product: SeededProduct;

beforeAll(async () => {
  h = await startHarness();
  orgId = (await seedOrganisation(h)).orgId;
  product = await seedProduct(h, orgId);
});
afterAll(() => h?.close());

/** Runs `work` in a transaction that stays open until the returned `commit` is called. */
async function openTransaction(work: (tx: EntityManager) => Promise<void>): Promise<{ commit(): Promise<void> }> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => { release = resolve; });
  let ready!: () => void;
  const started = new Promise<void>((resolve) => { ready = resolve; });
  const done = h.orm.em.fork().transactional(async (tx) => {
    await work(tx);
    ready();
    await released;
  });
  await Promise.race([started, done]);
  return { commit: async () => { release(); await done; } };
}

/** Whether `promise` is still pending after `ms`. */
async function stillPending(promise: Promise<unknown>, ms: number): Promise<boolean> {
  const pending = Symbol('pending');
  return (await Promise.race([promise, new Promise((r) => setTimeout(() => r(pending), ms))])) === pending;
}

/** A purchase of an order from storefront-a, as a webhook records it. */
async function orderPurchase(orderRef: string): Promise<string> {
  const { purchaseId } = await seedPurchase(h, orgId, product);
  await h.orm.em.fork().execute(`update purchase set source = 'storefront-a', external_order_id = ? where id = ?`, [orderRef, purchaseId]);
  return purchaseId;
}

test('the receipt check waits for a refund that holds its order, and then sees the notice it left', async () => {
  const purchaseId = await orderPurchase('RACE-1');
  const refund = await openTransaction(async (tx) => {
    await lockOrderRevocations(tx, orgId, 'storefront-a', 'RACE-1');
    await leaveRevocationNotice(tx, { orgId, platform: 'storefront-a', refKind: 'order', orderRef: 'RACE-1', reason: 'chargeback' }, null, new Date());
  });
  const check = withdrawBeforeReceipt(h.orm.em.fork(), purchaseId, new Date());
  expect(await stillPending(check, 300)).toBe(true);
  await refund.commit();
  await expect(check).resolves.toBe(true);
  const [row] = await h.orm.em.fork().execute(`select revoke_reason, receipt_status from purchase where id = ?`, [purchaseId]);
  expect(row).toEqual({ revoke_reason: 'chargeback', receipt_status: 'skipped' });
});

test('the receipt check: no notice, another order\'s notice, a product\'s notice, a revoked or unknown purchase', async () => {
  const plain = await orderPurchase('PLAIN-1');
  await expect(withdrawBeforeReceipt(h.orm.em.fork(), plain, new Date())).resolves.toBe(false);

  const em = h.orm.em.fork();
  await em.transactional((tx) => leaveRevocationNotice(tx, { orgId, platform: 'storefront-a', refKind: 'order', orderRef: 'OTHER-1', reason: 'refund' }, null, new Date()));
  await expect(withdrawBeforeReceipt(h.orm.em.fork(), plain, new Date())).resolves.toBe(false);

  const otherProduct = await seedProduct(h, orgId);
  await em.transactional((tx) => leaveRevocationNotice(tx, { orgId, platform: 'storefront-a', refKind: 'order', orderRef: 'PLAIN-1', reason: 'refund' }, otherProduct.productId, new Date()));
  await expect(withdrawBeforeReceipt(h.orm.em.fork(), plain, new Date())).resolves.toBe(false);
  await em.transactional((tx) => leaveRevocationNotice(tx, { orgId, platform: 'storefront-a', refKind: 'order', orderRef: 'PLAIN-1', reason: 'refund' }, product.productId, new Date()));
  await expect(withdrawBeforeReceipt(h.orm.em.fork(), plain, new Date())).resolves.toBe(true);
  // Revoked already: stays so, and says so.
  await expect(withdrawBeforeReceipt(h.orm.em.fork(), plain, new Date())).resolves.toBe(true);

  const byPayment = await orderPurchase('PAID-1');
  await em.fork().execute(`update purchase set payment_reference = 'PAY-9' where id = ?`, [byPayment]);
  await em.transactional((tx) => leaveRevocationNotice(tx, { orgId, platform: 'storefront-a', refKind: 'payment', orderRef: 'PAY-9', reason: 'refund' }, null, new Date()));
  await expect(withdrawBeforeReceipt(h.orm.em.fork(), byPayment, new Date())).resolves.toBe(true);

  await expect(withdrawBeforeReceipt(h.orm.em.fork(), '00000000-0000-4000-8000-000000000000', new Date())).resolves.toBe(false);
});

/** An entry of two order lines, each still running. */
async function entryOfTwoItems(): Promise<{ deliveryId: string; items: [string, string] }> {
  const em = h.orm.em.fork();
  const [entry] = await em.execute<Array<{ id: string }>>(
    `insert into webhook_delivery (id, organisation_id, platform, external_order_id, workflow_ids, received_at)
     values (gen_random_uuid(), ?, 'storefront-a', ?, '[]', now()) returning id`,
    [orgId, `TWO-${Math.random().toString(36).slice(2)}`],
  );
  const items = await em.execute<Array<{ id: string }>>(
    `insert into webhook_delivery_item (id, delivery_id, line_index, product_id)
     select gen_random_uuid(), ?, n, ? from generate_series(0, 1) n returning id`,
    [entry.id, product.productId],
  );
  return { deliveryId: entry.id, items: [items[0].id, items[1].id] };
}

const statusOf = async (deliveryId: string) =>
  (await h.orm.em.fork().execute<Array<{ status: string; completed: boolean }>>(
    `select status, completed_at is not null as completed from webhook_delivery where id = ?`, [deliveryId]))[0];

test('two runs reporting the lines of one entry at once: the second to get the entry sees the first\'s line, and the entry ends', async () => {
  const { deliveryId, items } = await entryOfTwoItems();
  const held = await openTransaction(async (tx) => {
    await tx.execute(`select id from webhook_delivery where id = ? for update`, [deliveryId]);
  });
  const reports = items.map((itemId) => recordItemOutcomes(h.orm.em.fork(), [{ itemId, outcome: 'fulfilled', reason: null, purchaseId: null }]));
  expect(await stillPending(Promise.all(reports), 300)).toBe(true);
  await held.commit();
  await Promise.all(reports);
  await expect(statusOf(deliveryId)).resolves.toEqual({ status: 'Success', completed: true });
});

test('reporting outcomes: written once, each entry with all its lines\' outcomes, an entry already final kept', async () => {
  const { deliveryId, items } = await entryOfTwoItems();
  const em = h.orm.em.fork();
  const [first] = await reportItemOutcomes(em, [{ itemId: items[0], outcome: 'error', reason: 'receipt failed', purchaseId: null }]);
  expect(first).toMatchObject({ delivery_id: deliveryId, organisation_id: orgId, platform: 'storefront-a', status: 'Pending' });
  expect([...first.outcomes].sort()).toEqual(['error', null].sort());
  // A retry with another outcome changes nothing.
  const [again] = await reportItemOutcomes(em, [{ itemId: items[0], outcome: 'fulfilled', reason: null, purchaseId: null }]);
  expect([...again.outcomes].sort()).toEqual(['error', null].sort());

  const alerts = await recordItemOutcomes(em, [{ itemId: items[1], outcome: 'error', reason: 'receipt failed', purchaseId: null }]);
  expect(alerts).toEqual([expect.objectContaining({ orgId, deliveryId, platform: 'storefront-a' })]);
  await expect(statusOf(deliveryId)).resolves.toEqual({ status: 'Error', completed: true });
  // An unknown item is no entry.
  await expect(reportItemOutcomes(em, [{ itemId: '00000000-0000-4000-8000-000000000000', outcome: 'fulfilled', reason: null, purchaseId: null }])).resolves.toEqual([]);
});
