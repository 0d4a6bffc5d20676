/**
 * Sales recorded at the same moment share one statement (src/purchases/record-sale): each line of
 * the statement gets its own answer, whatever the other lines hold (the same new customer, the same
 * order, the last free key of a pool, a product of another organisation), and a line writes its
 * link and its run's start only with a purchase it created.
 */
import { randomUUID } from 'node:crypto';
import type { FulfilmentRequest } from '../../src/domain/fulfilment';
import { recordSalePurchases, type SaleWrites } from '../../src/purchases/purchase-store';
import { dispatchRows } from '../../src/services/workflow-outbox';
import { startHarness, type Harness } from '../helpers/harness';
import { seedOrganisation, seedProduct } from '../helpers/seed';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h?.close());

const execute = async (text: string, params: unknown[] = []) => (await h.orm.em.fork().getConnection().execute(text, params)) as Array<Record<string, unknown>>;
/** A uuid[] parameter (knex would spread a JavaScript array into a list). */
const uuids = (ids: string[]) => `{${ids.join(',')}}`;

function line(orgId: string, productId: string, customer: FulfilmentRequest['customer'], order: string | null = null) {
  const input = {
    orgId, productId, customer, purchaseKey: randomUUID(), source: order ? 'manual' : 'api', externalOrderId: order,
    amount: '5.00', currency: 'EUR', paymentMethod: 'custom', test: false, sendReceipt: true,
  } satisfies FulfilmentRequest & { purchaseKey: string };
  const payload = { ...input, orderKey: input.purchaseKey };
  const [dispatch] = dispatchRows([{ kind: 'fulfil-sale', workflowId: `sale-${input.purchaseKey}`, orgId, payload }]);
  const writes: SaleWrites = { link: { tokenHash: randomUUID(), expiresAt: new Date(Date.now() + 86_400_000), now: new Date() }, dispatch };
  return { input, writes };
}

test('one statement, many sales: each line its own customer, purchase, link and run, or its own reason for none', async () => {
  const org = await seedOrganisation(h);
  const other = await seedOrganisation(h);
  const product = await seedProduct(h, org.orgId);
  const pooled = await seedProduct(h, org.orgId);
  const generated = await seedProduct(h, org.orgId);
  const othersProduct = await seedProduct(h, other.orgId);
  await execute(`update product set license_source = 'pool' where id = ?`, [pooled.productId]);
  await execute(`update product set license_source = 'generated' where id = ?`, [generated.productId]);
  await execute(`insert into license_key (id, organisation_id, product_id, key, created_at) values (?, ?, ?, 'ONLY-FREE-KEY', now())`,
    [randomUUID(), org.orgId, pooled.productId]);
  const [known] = await execute(`insert into customer (id, organisation_id, email, name, created_at)
    values (gen_random_uuid(), ?, 'known@example.com', 'Kim Known', now()) returning id`, [org.orgId]) as Array<{ id: string }>;

  const lines = [
    line(org.orgId, product.productId, { email: 'Twice@Example.com', name: ' Tess Twice ' }),
    line(org.orgId, product.productId, { email: 'twice@example.com', name: 'Other Name' }),
    line(org.orgId, product.productId, { id: known.id }),
    line(org.orgId, othersProduct.productId, { email: 'nowhere@example.com', name: 'No One' }),
    line(org.orgId, product.productId, { id: randomUUID() }),
    line(org.orgId, product.productId, { email: 'order@example.com', name: 'Olga Order' }, 'ORDER-1'),
    line(org.orgId, product.productId, { email: 'order@example.com', name: 'Olga Order' }, 'ORDER-1'),
    line(org.orgId, pooled.productId, { email: 'first-key@example.com', name: 'Fay First' }),
    line(org.orgId, pooled.productId, { email: 'no-key@example.com', name: 'Nat None' }),
    line(org.orgId, generated.productId, { id: known.id }),
  ];
  const rows = await recordSalePurchases(h.orm.em.fork(), lines);
  const keys = lines.map((l) => l.input.purchaseKey);

  // The same new customer twice: one customer, both purchases.
  expect(rows[0]).toMatchObject({ product_found: true, purchase_id: keys[0] });
  expect(rows[1]).toMatchObject({ product_found: true, purchase_id: keys[1], purchase_customer_id: rows[0].purchase_customer_id });
  expect(await execute(`select email, name from customer where organisation_id = ? and email like 'twice%'`, [org.orgId]))
    .toEqual([{ email: 'twice@example.com', name: 'Tess Twice' }]);
  expect(rows[2]).toMatchObject({ purchase_id: keys[2], purchase_customer_id: known.id });
  // Another organisation's product, an unknown customer: nothing recorded for them.
  expect(rows[3]).toMatchObject({ product_found: false, customer_id: null, purchase_id: null });
  expect(await execute(`select 1 from customer where email = 'nowhere@example.com'`)).toEqual([]);
  expect(rows[4]).toMatchObject({ product_found: true, customer_id: null, purchase_id: null });
  // One order twice: the first line records it; the second finds no purchase of its own (its retry finds the first's).
  expect(rows[5]).toMatchObject({ purchase_id: keys[5] });
  expect(rows[6]).toMatchObject({ purchase_id: null });
  const [retried] = await recordSalePurchases(h.orm.em.fork(), [{ ...lines[6] }]);
  expect(retried.purchase_id).toBe(keys[5]);
  // The pool's only free key goes to the first of its lines; the second waits.
  expect(rows[7]).toMatchObject({ purchase_id: keys[7], license_pool: true, license_waiting: false });
  expect(rows[8]).toMatchObject({ purchase_id: keys[8], license_pool: true, license_waiting: true });
  expect(await execute(`select key from license_key where purchase_id = ?`, [keys[7]])).toEqual([{ key: 'ONLY-FREE-KEY' }]);
  expect(rows[9]).toMatchObject({ purchase_id: keys[9], license_pool: false, license_waiting: false });
  expect(await execute(`select count(*)::int as n from license_key where purchase_id = ?`, [keys[9]])).toEqual([{ n: 1 }]);

  // A link and a run's start for each purchase created here, and for nothing else.
  const created = [0, 1, 2, 5, 7, 8, 9].map((i) => keys[i]).sort();
  const linked = await execute(`select purchase_id from download_token where purchase_id = any(?::uuid[]) order by purchase_id`, [uuids(keys)]);
  expect(linked.map((r) => r.purchase_id)).toEqual(created);
  const started = await execute(`select id from workflow_dispatch where id = any(?::uuid[])`, [uuids(lines.map((l) => l.writes.dispatch.id))]);
  expect(started.map((r) => r.id as string).sort()).toEqual([0, 1, 2, 5, 7, 8, 9].map((i) => lines[i].writes.dispatch.id).sort());
});

test('sales sent at once through the API are each answered, one order once', async () => {
  const org = await seedOrganisation(h);
  const product = await seedProduct(h, org.orgId);
  const post = (fields: Record<string, string>) => h.app.inject({
    method: 'POST', url: '/api/purchases',
    headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ productId: product.productId, amount: '5', currency: 'EUR', ...fields }).toString(),
  });
  const buyers = await Promise.all(Array.from({ length: 30 }, (_, i) =>
    post({ customerId: 'new', 'newCustomer.email': `buyer-${i}@example.com` })));
  expect(buyers.map((r) => r.statusCode)).toEqual(Array(30).fill(201));
  const purchaseIds = buyers.map((r) => /data-purchase-id="([^"]+)"/.exec(r.body)![1]);
  expect(new Set(purchaseIds).size).toBe(30);

  const sameOrder = await Promise.all(Array.from({ length: 6 }, (_, i) =>
    post({ customerId: 'new', 'newCustomer.email': `same-order-${i}@example.com`, source: 'cart-e', externalOrderId: 'HAND-1' })));
  expect(sameOrder.map((r) => r.statusCode).sort()).toEqual([201, 409, 409, 409, 409, 409]);
  expect(sameOrder.filter((r) => r.statusCode === 409).map((r) => r.body)).toEqual(Array(5).fill(expect.stringContaining('this order is already recorded')));
  expect(await execute(`select count(*)::int as n from purchase where organisation_id = ?`, [org.orgId])).toEqual([{ n: 31 }]);
  // The order once recorded, a sale of it refused creates no customer either.
  const late = await post({ customerId: 'new', 'newCustomer.email': 'late-same-order@example.com', source: 'cart-e', externalOrderId: 'HAND-1' });
  expect(late.statusCode).toBe(409);
  expect(await execute(`select count(*)::int as n from customer where organisation_id = ? and email = ?`, [org.orgId, 'late-same-order@example.com']))
    .toEqual([{ n: 0 }]);
});
