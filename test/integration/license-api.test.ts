/**
 * The public license API and the staff's view of a purchase's key (decisions §14): real PostgreSQL
 * and Temporal. Each test calls from client addresses of its own (inject's remoteAddress), so the
 * per-address limit of one test never refuses another's calls.
 */
import type { FastifyInstance, InjectOptions } from 'fastify';
import { LicenseKey } from '../../src/db/entities';
import { buildApiApp } from '../../src/roles';
import { LICENSE_API_LIMITS } from '../../src/http/routes/licenses';
import { seedCallers, type ApiCallers } from '../helpers/api-callers';
import { listedEvents } from '../helpers/events';
import { startHarness, type Harness } from '../helpers/harness';
import { parsePdf, squash } from '../helpers/pdf-text';
import { seedProduct } from '../helpers/seed';
import { eventually } from '../helpers/webhooks';

let h: Harness;
let callers: ApiCallers;
let productId: string;

beforeAll(async () => {
  h = await startHarness({ worker: false });
  callers = await seedCallers(h);
  ({ productId } = await seedProduct(h, callers.orgId, { name: 'Licensed App' }));
  const res = await h.app.inject({
    method: 'PUT', url: `/api/products/${productId}`, headers: callers.owner,
    payload: { licenseKeys: { source: 'generated', activationLimit: 2 } },
  });
  expect(res.statusCode).toBe(200);
});
afterAll(() => h?.close());

let addressCounter = 0;
/** A client address no other test uses. */
const freshAddress = () => `203.0.113.${(addressCounter += 1)}`;

/** A sale of the licensed product (its key is issued in the sale's own statement): the purchase id and key. */
async function sale(): Promise<{ purchaseId: string; key: string }> {
  const res = await h.app.inject({
    method: 'POST', url: '/api/purchases',
    headers: { ...callers.owner, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({
      customerId: 'new', 'newCustomer.name': 'Lee Buyer', 'newCustomer.email': `lee-${Date.now()}-${addressCounter}@example.com`,
      productId, amount: '30', currency: 'usd', paymentMethod: 'custom', sendEmail: 'false',
    }).toString(),
  });
  expect(res.statusCode).toBe(201);
  const purchaseId = /data-purchase-id="([^"]+)"/.exec(res.body)![1];
  const key = await eventually(async () => (await h.orm.em.fork().findOne(LicenseKey, { purchase: purchaseId }))?.key, 10_000, 'the key');
  return { purchaseId, key };
}

function call(path: string, payload: object, remoteAddress: string, app: FastifyInstance = h.app, extra: Partial<InjectOptions> = {}) {
  return app.inject({ method: 'POST', url: `/licenses/${path}`, payload, remoteAddress, ...extra });
}

test('activations up to the limit; one more is 409; deactivating frees a seat; a deactivated instance does not validate', async () => {
  const ip = freshAddress();
  const { key } = await sale();

  const fresh = await call('validate', { key }, ip);
  expect(fresh.statusCode).toBe(200);
  expect(fresh.json()).toEqual({
    valid: true, status: 'active', product: { id: productId, name: 'Licensed App' }, activations: { limit: 2, used: 0 }, instance: null,
  });

  const first = await call('activate', { key, instanceName: 'Laptop' }, ip);
  expect(first.statusCode).toBe(201);
  expect(first.json()).toEqual({ instanceId: expect.stringMatching(/^[0-9a-f-]{36}$/), activations: { limit: 2, used: 1 } });
  const second = await call('activate', { key, instanceName: 'Desktop' }, ip);
  expect(second.json().activations).toEqual({ limit: 2, used: 2 });
  const third = await call('activate', { key, instanceName: 'Tablet' }, ip);
  expect(third.statusCode).toBe(409);
  expect(third.json()).toEqual({ error: 'activation limit reached' });

  const { instanceId } = first.json() as { instanceId: string };
  const valid = await call('validate', { key, instanceId }, ip);
  expect(valid.json()).toMatchObject({ valid: true, instance: { instanceId, instanceName: 'Laptop', deactivatedAt: null } });

  const gone = await call('deactivate', { key, instanceId }, ip);
  expect(gone.statusCode).toBe(200);
  expect(gone.json()).toEqual({ activations: { limit: 2, used: 1 } });
  const deactivated = await call('validate', { key, instanceId }, ip);
  expect(deactivated.statusCode).toBe(200);
  expect(deactivated.json()).toMatchObject({ valid: false, status: 'active', activations: { limit: 2, used: 1 }, instance: { instanceId } });
  expect(deactivated.json().instance.deactivatedAt).toEqual(expect.any(String));
  // Deactivating it again changes nothing; an instance the key never had is 404.
  expect((await call('deactivate', { key, instanceId }, ip)).json()).toEqual({ activations: { limit: 2, used: 1 } });
  const stranger = await call('deactivate', { key, instanceId: '00000000-0000-4000-8000-000000000000' }, ip);
  expect(stranger.statusCode).toBe(404);
  expect(stranger.json()).toEqual({ error: expect.any(String) });
  const unknownInstance = await call('validate', { key, instanceId: '00000000-0000-4000-8000-000000000000' }, ip);
  expect(unknownInstance.json()).toMatchObject({ valid: false, instance: null });

  const again = await call('activate', { key, instanceName: 'Tablet' }, ip);
  expect(again.statusCode).toBe(201);
  expect(again.json().activations).toEqual({ limit: 2, used: 2 });
});

test('installations racing for the seats get exactly the limit of them', async () => {
  const { key } = await sale();
  const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => call('activate', { key, instanceName: `Racer ${i}` }, freshAddress())));
  expect(answers.map((a) => a.statusCode).sort()).toEqual([201, 201, 409, 409, 409, 409]);
  expect((await call('validate', { key }, freshAddress())).json().activations).toEqual({ limit: 2, used: 2 });
});

test('a revoked purchase\'s key validates as revoked and does not activate; restoring makes it active again', async () => {
  const ip = freshAddress();
  const { purchaseId, key } = await sale();
  expect((await call('activate', { key, instanceName: 'Laptop' }, ip)).statusCode).toBe(201);

  const revoke = await h.app.inject({ method: 'POST', url: `/api/purchases/${purchaseId}/revoke`, headers: callers.owner });
  expect(revoke.statusCode).toBe(200);
  const revoked = await call('validate', { key }, ip);
  expect(revoked.statusCode).toBe(200);
  expect(revoked.json()).toMatchObject({ valid: false, status: 'revoked', activations: { limit: 2, used: 1 } });
  const refused = await call('activate', { key, instanceName: 'Desktop' }, ip);
  expect(refused.statusCode).toBe(403);
  expect(refused.json()).toEqual({ error: 'license revoked' });
  const staff = await h.app.inject({ method: 'GET', url: `/api/purchases/${purchaseId}/license`, headers: callers.owner });
  expect(staff.json().status).toBe('revoked');

  expect((await h.app.inject({ method: 'POST', url: `/api/purchases/${purchaseId}/restore`, headers: callers.owner })).statusCode).toBe(200);
  expect((await call('validate', { key }, ip)).json()).toMatchObject({ valid: true, status: 'active' });
  expect((await call('activate', { key, instanceName: 'Desktop' }, ip)).statusCode).toBe(201);
});

test('an unknown key is 404; bad bodies are 400 naming the field; a form body works', async () => {
  const ip = freshAddress();
  const unknown = await call('validate', { key: 'NOPE-NOPE-NOPE' }, ip);
  expect(unknown.statusCode).toBe(404);
  expect(unknown.json()).toEqual({ valid: false, error: 'license key not found' });
  for (const path of ['activate', 'deactivate']) {
    const res = await call(path, { key: 'NOPE-NOPE-NOPE', instanceName: 'x', instanceId: '00000000-0000-4000-8000-000000000000' }, ip);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'license key not found' });
  }

  const bad: Array<[string, object, RegExp]> = [
    ['validate', {}, /^key: /],
    ['validate', { key: '' }, /^key: key is required/],
    ['validate', { key: 'x'.repeat(201) }, /^key: too long/],
    ['validate', { key: 'ABC', instanceId: 'not-an-id' }, /^instanceId: /],
    ['activate', { key: 'ABC' }, /^instanceName: /],
    ['activate', { key: 'ABC', instanceName: '   ' }, /^instanceName: instanceName is required/],
    ['activate', { key: 'ABC', instanceName: 'n'.repeat(201) }, /^instanceName: too long/],
    ['deactivate', { key: 'ABC' }, /^instanceId: /],
  ];
  for (const [path, body, reason] of bad) {
    const res = await call(path, body, ip);
    expect({ path, body, status: res.statusCode }).toEqual({ path, body, status: 400 });
    expect(res.json().error).toMatch(reason);
  }

  const { key } = await sale();
  const form = (fields: Record<string, string>) => ({
    headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams(fields).toString(),
  });
  const activated = await h.app.inject({ method: 'POST', url: '/licenses/activate', remoteAddress: ip, ...form({ key, instanceName: 'Form PC' }) });
  expect(activated.statusCode).toBe(201);
  const validated = await h.app.inject({
    method: 'POST', url: '/licenses/validate', remoteAddress: ip, ...form({ key, instanceId: activated.json().instanceId }),
  });
  expect(validated.json()).toMatchObject({ valid: true, instance: { instanceName: 'Form PC' } });
});

test('CORS is open on /licenses (with a preflight) and only there', async () => {
  const ip = freshAddress();
  const { key } = await sale();
  const res = await call('validate', { key }, ip, h.app, { headers: { origin: 'https://app.example.com' } });
  expect(res.headers['access-control-allow-origin']).toBe('*');
  const notFound = await call('validate', { key: 'NOPE' }, ip, h.app, { headers: { origin: 'https://app.example.com' } });
  expect(notFound.headers['access-control-allow-origin']).toBe('*');

  const preflight = await h.app.inject({
    method: 'OPTIONS', url: '/licenses/activate', remoteAddress: ip,
    headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
  });
  expect(preflight.statusCode).toBe(204);
  expect(preflight.headers['access-control-allow-origin']).toBe('*');
  expect(preflight.headers['access-control-allow-methods']).toContain('POST');
  expect(preflight.headers['access-control-allow-headers']).toContain('content-type');

  const api = await h.app.inject({ method: 'GET', url: '/api/products', headers: { ...callers.owner, origin: 'https://app.example.com' } });
  expect(api.headers['access-control-allow-origin']).toBeUndefined();
});

test('the limits are shared by every API process: per address (unknown keys included) and per key', async () => {
  const other = await buildApiApp({ config: h.config, orm: h.orm, starter: h.starter, storage: h.storage, clock: () => new Date() });
  await other.ready();
  try {
    const ip = freshAddress();
    const { perIp, perKey } = LICENSE_API_LIMITS;
    const answers: number[] = [];
    for (let i = 0; i < perIp.max; i += 1) answers.push((await call('validate', { key: `UNKNOWN-${i}` }, ip, i % 2 ? other : h.app)).statusCode);
    expect(answers.every((s) => s === 404)).toBe(true);
    for (const app of [h.app, other]) {
      const refused = await call('validate', { key: 'UNKNOWN-X' }, ip, app);
      expect(refused.statusCode).toBe(429);
      expect(refused.json()).toEqual({ error: expect.stringMatching(/too many requests/) });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      // A malformed call is refused by the address's limit too.
      expect((await call('validate', {}, ip, app)).statusCode).toBe(429);
    }

    const { key } = await sale();
    const perKeyAnswers: number[] = [];
    for (let i = 0; i < perKey.max; i += 1) perKeyAnswers.push((await call('validate', { key }, freshAddress(), i % 2 ? other : h.app)).statusCode);
    expect(perKeyAnswers.every((s) => s === 200)).toBe(true);
    for (const app of [h.app, other]) expect((await call('activate', { key, instanceName: 'Over' }, freshAddress(), app)).statusCode).toBe(429);
    // Another key from the same addresses is not refused.
    expect((await call('validate', { key: 'UNKNOWN-Y' }, freshAddress(), other)).statusCode).toBe(404);
  } finally {
    await other.close();
  }
});

test('activations and deactivations are recorded as license.* events with the seats after the change', async () => {
  const ip = freshAddress();
  const { purchaseId, key } = await sale();
  const activated = await call('activate', { key, instanceName: 'Studio Mac' }, ip);
  const { instanceId } = activated.json() as { instanceId: string };
  expect((await call('deactivate', { key, instanceId }, ip)).statusCode).toBe(200);

  const listed = (type: string) => listedEvents<{ type: string; data: { instanceId: string } }>(
    h.app, callers.owner, type, (e) => e.data.instanceId === instanceId);
  const mine = await listed('license.activated');
  expect(mine).toEqual([{
    id: expect.stringMatching(/^evt_/), type: 'license.activated', timestamp: expect.any(String),
    data: { purchaseId, productId, key, instanceId, instanceName: 'Studio Mac', activations: { limit: 2, used: 1 } },
  }]);
  const gone = await listed('license.deactivated');
  expect(gone).toEqual([expect.objectContaining({
    type: 'license.deactivated',
    data: { purchaseId, productId, key, instanceId, instanceName: 'Studio Mac', activations: { limit: 2, used: 0 } },
  })]);
  // Another organisation sees none of them.
  const others = await h.app.inject({ method: 'GET', url: '/api/events?type=license.activated', headers: callers.other });
  expect(others.json()).toEqual([]);
});

test('staff read a purchase\'s key and its activations; owners and admins deactivate one, members may not', async () => {
  const ip = freshAddress();
  const { purchaseId, key } = await sale();
  const laptop = (await call('activate', { key, instanceName: 'Laptop' }, ip)).json() as { instanceId: string };
  await call('activate', { key, instanceName: 'Desktop' }, ip);

  const read = await h.app.inject({ method: 'GET', url: `/api/purchases/${purchaseId}/license`, headers: callers.member });
  expect(read.statusCode).toBe(200);
  expect(read.json()).toEqual({
    key, status: 'active', activationLimit: 2,
    activations: [
      { instanceId: laptop.instanceId, instanceName: 'Laptop', activatedAt: expect.any(String) },
      { instanceId: expect.any(String), instanceName: 'Desktop', activatedAt: expect.any(String) },
    ],
  });
  expect((await h.app.inject({ method: 'GET', url: `/api/purchases/${purchaseId}/license`, headers: callers.other })).statusCode).toBe(404);

  const url = `/api/purchases/${purchaseId}/license/activations/${laptop.instanceId}`;
  expect((await h.app.inject({ method: 'DELETE', url, headers: callers.member })).statusCode).toBe(403);
  expect((await h.app.inject({ method: 'DELETE', url, headers: callers.other })).statusCode).toBe(404);
  const deleted = await h.app.inject({ method: 'DELETE', url, headers: callers.owner });
  expect(deleted.statusCode).toBe(204);
  const after = await h.app.inject({ method: 'GET', url: `/api/purchases/${purchaseId}/license`, headers: callers.owner });
  expect(after.json().activations.map((a: { instanceName: string }) => a.instanceName)).toEqual(['Desktop']);
  expect((await call('activate', { key, instanceName: 'Tablet' }, ip)).statusCode).toBe(201);
  const unknown = `/api/purchases/${purchaseId}/license/activations/00000000-0000-4000-8000-000000000000`;
  expect((await h.app.inject({ method: 'DELETE', url: unknown, headers: callers.owner })).statusCode).toBe(404);

  await listedEvents<{ data: { instanceId: string } }>(h.app, callers.owner, 'license.deactivated', (e) => e.data.instanceId === laptop.instanceId);

  // The dispute evidence keeps every installation, the deactivated one with its time.
  const evidence = await h.app.inject({ method: 'GET', url: `/api/purchases/${purchaseId}/evidence`, headers: callers.owner });
  expect(evidence.json().license).toEqual({
    key, status: 'active', activationLimit: 2, activationsNotListed: 0,
    activations: [
      { instanceId: laptop.instanceId, instanceName: 'Laptop', activatedAt: expect.any(String), deactivatedAt: expect.any(String) },
      expect.objectContaining({ instanceName: 'Desktop', deactivatedAt: null }),
      expect.objectContaining({ instanceName: 'Tablet', deactivatedAt: null }),
    ],
  });
  const pdf = await h.app.inject({ method: 'GET', url: `/api/purchases/${purchaseId}/evidence?format=pdf`, headers: callers.owner });
  expect(pdf.statusCode).toBe(200);
  expect(squash((await parsePdf(pdf.rawPayload)).text)).toContain(key);

  // A purchase of a product without keys has none to show.
  const { productId: plain } = await seedProduct(h, callers.orgId);
  const plainSale = await h.app.inject({
    method: 'POST', url: '/api/purchases', headers: { ...callers.owner, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({
      customerId: 'new', 'newCustomer.email': 'plain@example.com', productId: plain, amount: '1', currency: 'usd', paymentMethod: 'custom', sendEmail: 'false',
    }).toString(),
  });
  const plainId = /data-purchase-id="([^"]+)"/.exec(plainSale.body)![1];
  expect((await h.app.inject({ method: 'GET', url: `/api/purchases/${plainId}/license`, headers: callers.owner })).statusCode).toBe(404);
});

test('a key activated and deactivated thousands of times: the evidence lists the newest 200 installations and counts the rest, in JSON and in the PDF', async () => {
  const { purchaseId, key } = await sale();
  // What a link holder could build up at 30 calls a minute over a week or so, older than the one made below.
  await h.orm.em.fork().execute(
    `insert into license_activation (id, license_key_id, instance_name, activated_at, deactivated_at)
     select gen_random_uuid(), k.id, 'Machine ' || i, now() - make_interval(mins => 20001 - i), now() - make_interval(mins => 20000 - i)
     from license_key k, generate_series(1, 12000) i where k.key = ?`,
    [key],
  );
  const record = (await h.app.inject({ method: 'GET', url: `/api/purchases/${purchaseId}/evidence`, headers: callers.owner })).json();
  expect(record.license.activations).toHaveLength(200);
  expect(record.license.activationsNotListed).toBe(11_800);
  expect(record.license.activations[199].instanceName).toBe('Machine 12000');
  const pdf = await h.app.inject({ method: 'GET', url: `/api/purchases/${purchaseId}/evidence?format=pdf`, headers: callers.owner });
  expect(pdf.statusCode).toBe(200);
  const text = squash((await parsePdf(pdf.rawPayload)).text);
  expect(text).toContain('The newest 200 installations; 11,800 older installations are not listed.');
  expect(text).not.toContain('Machine 11800 ');
}, 120_000);
