import { Customer, DownloadToken, Purchase } from '../../src/db/entities';
import { fulfilSaleWorkflowId } from '../../src/domain/ids';
import { buildApiApp } from '../../src/roles';
import { startHarness, unreachableStarter, type Harness } from '../helpers/harness';
import { seedOrganisation, seedProduct, type SeededProduct } from '../helpers/seed';
import { eventually } from '../helpers/webhooks';

let h: Harness;
let org: { orgId: string; apiKey: string };
let product: SeededProduct;

beforeAll(async () => {
  h = await startHarness();
  org = await seedOrganisation(h);
  product = await seedProduct(h, org.orgId, { name: 'Ebook Pro' });
});
afterAll(() => h?.close());

function form(fields: Record<string, string>): string {
  return new URLSearchParams(fields).toString();
}

function post(fields: Record<string, string>, headers: Record<string, string> = { authorization: `Bearer ${org.apiKey}` }) {
  return h.app.inject({
    method: 'POST',
    url: '/api/purchases',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    payload: form(fields),
  });
}

const sale = (email: string) => ({
  customerId: 'new',
  'newCustomer.name': 'Sam Buyer',
  'newCustomer.email': email,
  productId: product.productId,
  amount: '19.9',
  currency: 'usd',
  paymentMethod: 'custom',
  sendEmail: 'true',
});

test('a form POST records the purchase through a completed workflow and emails the link', async () => {
  const res = await post(sale('Sam@Example.com'));
  expect(res.statusCode).toBe(201);
  expect(res.headers['content-type']).toMatch(/text\/html/);
  const purchaseId = /data-purchase-id="([^"]+)"/.exec(res.body)?.[1];
  const customerId = /data-customer-id="([^"]+)"/.exec(res.body)?.[1];
  expect(purchaseId).toBeDefined();
  expect(res.body).toMatch(/<a href="http:\/\/delivery\.test\/d\/[A-Za-z0-9_-]{40,}">/);

  const mail = await h.mailbox.waitFor((m) => m.to.includes('sam@example.com'), 20_000);
  expect(mail.subject).toContain('Ebook Pro');
  expect(mail.text).toMatch(/http:\/\/delivery\.test\/d\/[A-Za-z0-9_-]{40,}/);
  expect(mail.html).toContain('href="http://delivery.test/d/');

  const em = h.orm.em.fork();
  const purchase = await em.findOneOrFail(Purchase, purchaseId!, { populate: ['customer'] });
  expect(purchase.customer.id).toBe(customerId);
  expect(purchase.customer.email).toBe('sam@example.com');
  expect(purchase.amount).toBe('19.9000');
  expect(purchase.currency).toBe('USD');
  expect(purchase.source).toBe('api');
  expect(purchase.version?.id).toBe(product.versionId);
  // One token for the fragment, one for the email.
  expect(await em.count(DownloadToken, { purchase: purchaseId })).toBe(2);

  // The run is in Temporal, completed, findable by its search attributes.
  const runs = [];
  for await (const run of h.temporal.workflow.list({ query: `OrgId = "${org.orgId}"` })) runs.push(run);
  expect(runs.length).toBeGreaterThanOrEqual(1);
  const handle = h.temporal.workflow.getHandle(runs[0].workflowId);
  await handle.result();
  expect((await handle.describe()).status.name).toBe('COMPLETED');
  expect(runs[0].workflowId).not.toContain('@');
});

test('a sale\'s outbox row dispatched again (a crash after the start) starts no second run and sends no second receipt', async () => {
  const email = `again-${Date.now()}@example.com`;
  const res = await post(sale(email));
  expect(res.statusCode).toBe(201);
  const purchaseId = /data-purchase-id="([^"]+)"/.exec(res.body)![1];
  await h.mailbox.waitFor((m) => m.to.includes(email), 20_000);
  const orderKey = `sale-${purchaseId}`;
  const workflowId = fulfilSaleWorkflowId({ orgId: org.orgId, source: 'api', orderKey, productId: product.productId });
  const first = await h.temporal.workflow.getHandle(workflowId).describe();
  await h.temporal.workflow.getHandle(workflowId).result();

  await h.starter.dispatch({
    kind: 'fulfil-sale',
    workflowId,
    orgId: org.orgId,
    payload: {
      orgId: org.orgId, source: 'api', externalOrderId: null, productId: product.productId, customer: { email, name: 'Sam Buyer' },
      amount: '19.90', currency: 'USD', paymentMethod: 'custom', test: false, sendReceipt: true, purchaseKey: purchaseId, orderKey,
    },
  });
  expect((await h.temporal.workflow.getHandle(workflowId).describe()).runId).toBe(first.runId);
  expect(h.mailbox.messages().filter((m) => m.to.includes(email))).toHaveLength(1);
});

test('sendEmail=false records everything and sends nothing', async () => {
  const res = await post({ ...sale('quiet@example.com'), sendEmail: 'false' });
  expect(res.statusCode).toBe(201);
  const purchaseId = /data-purchase-id="([^"]+)"/.exec(res.body)![1];
  const purchase = await h.orm.em.fork().findOneOrFail(Purchase, purchaseId);
  expect(purchase.receiptSentAt).toBeNull();
  await new Promise((r) => setTimeout(r, 500));
  expect(h.mailbox.messages().some((m) => m.to.includes('quiet@example.com'))).toBe(false);
});

test('an existing customer can buy again by id', async () => {
  const first = await post({ ...sale('again@example.com'), sendEmail: 'false' });
  const customerId = /data-customer-id="([^"]+)"/.exec(first.body)![1];
  const res = await post({ customerId, productId: product.productId, amount: '5', currency: 'EUR', sendEmail: 'false' });
  expect(res.statusCode).toBe(201);
  expect(res.body).toContain(`data-customer-id="${customerId}"`);
});

describe('bad input gets a clear 4xx and creates nothing', () => {
  async function counts() {
    const em = h.orm.em.fork();
    return { customers: await em.count(Customer, {}), purchases: await em.count(Purchase, {}) };
  }

  test.each([
    ['no productId', () => ({ ...sale('a@example.com'), productId: '' }), 400],
    ['no amount', () => (({ amount: _a, ...rest }) => rest)(sale('a@example.com')), 400],
    ['no currency', () => (({ currency: _c, ...rest }) => rest)(sale('a@example.com')), 400],
    ['no customerId', () => (({ customerId: _c, ...rest }) => rest)(sale('a@example.com')), 400],
    ['new customer without email', () => ({ ...sale(''), 'newCustomer.email': '' }), 400],
    ['amount not a decimal', () => ({ ...sale('a@example.com'), amount: '1e3' }), 400],
    ['amount with a float artefact', () => ({ ...sale('a@example.com'), amount: '0.30000000000000004' }), 400],
    ['currency not a code', () => ({ ...sale('a@example.com'), currency: 'dollars' }), 400],
    ['unknown product', () => ({ ...sale('a@example.com'), productId: '00000000-0000-4000-8000-000000000000' }), 404],
    ['product id not a uuid', () => ({ ...sale('a@example.com'), productId: 'ebook-pro' }), 404],
    ['unknown customer', () => ({ ...sale('a@example.com'), customerId: '00000000-0000-4000-8000-000000000000' }), 404],
  ])('%s', async (_name, fields, status) => {
    const before = await counts();
    const res = await post(fields() as Record<string, string>);
    expect(res.statusCode).toBe(status);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(res.body).toMatch(/role="alert"/);
    expect(await counts()).toEqual(before);
  });

  test('an email that is already a customer → 422', async () => {
    await post({ ...sale('taken@example.com'), sendEmail: 'false' });
    const before = await counts();
    const res = await post({ ...sale('TAKEN@example.com'), sendEmail: 'false' });
    expect(res.statusCode).toBe(422);
    expect(await counts()).toEqual(before);
  });

  test('a product that is not live → 409', async () => {
    const draft = await seedProduct(h, org.orgId, { status: 'draft' });
    const res = await post({ ...sale('draft@example.com'), productId: draft.productId });
    expect(res.statusCode).toBe(409);
    expect(res.body).toContain('product is not live');
  });

  test('wrong or missing key → 401, by Bearer and by X-API-Key', async () => {
    expect((await post(sale('k@example.com'), { authorization: 'Bearer nope' })).statusCode).toBe(401);
    expect((await post(sale('k@example.com'), { 'x-api-key': 'nope' })).statusCode).toBe(401);
    expect((await post(sale('k@example.com'), {})).statusCode).toBe(401);
    const ok = await post({ ...sale('xkey@example.com'), sendEmail: 'false' }, { 'x-api-key': org.apiKey });
    expect(ok.statusCode).toBe(201);
  });

  test('JSON → 415', async () => {
    const res = await h.app.inject({
      method: 'POST', url: '/api/purchases',
      headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json' },
      payload: JSON.stringify(sale('json@example.com')),
    });
    expect(res.statusCode).toBe(415);
  });

  test('a product of another organisation is not found', async () => {
    const other = await seedOrganisation(h);
    const theirs = await seedProduct(h, other.orgId);
    const res = await post({ ...sale('x@example.com'), productId: theirs.productId });
    expect(res.statusCode).toBe(404);
  });
});

test('multipart form fields work like URL-encoded ones', async () => {
  const boundary = '----delivery';
  const fields = { ...sale('multi@example.com'), sendEmail: 'false' };
  const body = Object.entries(fields)
    .map(([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`)
    .join('') + `--${boundary}--\r\n`;
  const res = await h.app.inject({
    method: 'POST', url: '/api/purchases',
    headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
    payload: body,
  });
  expect(res.statusCode).toBe(201);
});

test('with the workflow engine out of reach the sale is still recorded and answered; the outbox sends its receipt later', async () => {
  // This app's engine never answers; the harness's app, another API process on the same
  // database, stands for the engine coming back: its dispatcher takes the sale's row.
  const app = await buildApiApp({ config: h.config, orm: h.orm, starter: unreachableStarter(h.config), storage: h.storage, clock: () => new Date() });
  await app.ready();
  let closed = false;
  try {
    const email = `outage-${Date.now()}@example.com`;
    const res = await app.inject({
      method: 'POST',
      url: '/api/purchases',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${org.apiKey}` },
      payload: form(sale(email)),
    });
    expect(res.statusCode).toBe(201);
    const purchaseId = /data-purchase-id="([^"]+)"/.exec(res.body)?.[1];
    const link = /<a href="(http:\/\/delivery\.test\/d\/[A-Za-z0-9_-]{40,})">/.exec(res.body)?.[1];
    expect(link).toBeDefined();
    expect((await h.orm.em.fork().findOneOrFail(Purchase, purchaseId!, { populate: ['customer'] })).customer.email).toBe(email);

    // That process stops: its loops no longer take the row for a start that cannot succeed (each
    // attempt held it for the start's deadline, and on a loaded machine they won the row for 30 s).
    await app.close();
    closed = true;
    const mail = await h.mailbox.waitFor((m) => m.to.includes(email), 30_000);
    expect(mail.subject).toContain('Ebook Pro');
    await eventually(async () => ((await h.orm.em.fork().findOneOrFail(Purchase, purchaseId!)).receiptStatus === 'sent' ? true : undefined));
    expect(h.mailbox.messages().filter((m) => m.to.includes(email))).toHaveLength(1);
  } finally {
    if (!closed) await app.close();
  }
}, 60_000);
