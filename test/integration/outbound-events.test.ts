/**
 * Outbound events (decisions §13) end to end: real PostgreSQL, Temporal, SMTP, and receivers that
 * are real HTTP servers on 127.0.0.1 (OUTBOUND_WEBHOOKS_ALLOW_PRIVATE=true), every request checked
 * with the reference library's Webhook.verify.
 *
 * @mostly-waiting receivers that never answer, 15 s per try (alone: the cores 15 % busy)
 */
import { Client as PgClient } from 'pg';
import { Webhook } from 'standardwebhooks';
import { checkEndpointUrl } from '../../src/events/addresses';
import { withEndpointSlot } from '../../src/events/endpoint-lease-store';
import { sendWebhook } from '../../src/events/sender';
import { outboundDeliveryWorkflowId } from '../../src/domain/ids';
import { MAX_IN_FLIGHT_PER_ENDPOINT } from '../../src/domain/outbound-events';
import { enqueueDispatches } from '../../src/services/workflow-outbox';
import { markReceiptFailed } from '../../src/purchases/purchase-store';
import { seedCallers, type ApiCallers } from '../helpers/api-callers';
import { listedEvents } from '../helpers/events';
import { seedPurchase } from '../helpers/download-links';
import { startHarness, type Harness } from '../helpers/harness';
import { startReceiver, type Answer, type Receiver } from '../helpers/receivers';
import { seedProduct, type SeededProduct } from '../helpers/seed';
import { configureIntegration, eventually, orderBody, send } from '../helpers/webhooks';

let h: Harness;
let callers: ApiCallers;
let product: SeededProduct;
const receivers: Receiver[] = [];

beforeAll(async () => {
  h = await startHarness({
    env: { OUTBOUND_WEBHOOKS_ALLOW_PRIVATE: 'true', OUTBOUND_RETRY_SCHEDULE: '1s,1s', OUTBOUND_DISABLE_AFTER: '1h', DISPATCH_POLL_INTERVAL: '1s' },
  });
  callers = await seedCallers(h);
  product = await seedProduct(h, callers.orgId);
});
// Each test starts without endpoints (a failed test leaves none behind for the next).
afterEach(async () => {
  await h.orm.em.fork().execute('delete from webhook_endpoint where organisation_id = ?', [callers.orgId]);
});
afterAll(async () => {
  for (const r of receivers) await r.close();
  await h?.close();
});

async function receiver(answer?: Answer): Promise<Receiver> {
  const r = await startReceiver(answer);
  receivers.push(r);
  return r;
}

async function api(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object, headers = callers.owner) {
  return h.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
}

async function addEndpoint(url: string, events: string[] = []): Promise<{ id: string; secret: string }> {
  const res = await api('POST', '/api/webhook-endpoints', { url, events, description: 'test' });
  expect(res.statusCode).toBe(201);
  return res.json();
}

/** Every request the receiver got verifies with the secret (the reference library's own check). */
function verifyAll(r: Receiver, secret: string): void {
  const wh = new Webhook(secret);
  for (const req of r.received) expect(() => wh.verify(req.body, req.headers as Record<string, string>)).not.toThrow();
}

async function deliveryOf(eventId: string, endpointId: string) {
  const res = await api('GET', `/api/events/${eventId}`);
  return (res.json() as { deliveries: Array<{ endpointId: string; state: string; attempts: number }> }).deliveries.find((d) => d.endpointId === endpointId);
}

/** A sale by API key (form fields, as POST /api/purchases takes them); no email. */
async function purchaseViaApi(): Promise<string> {
  const res = await h.app.inject({
    method: 'POST', url: '/api/purchases', headers: { ...callers.owner, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({
      customerId: 'new', 'newCustomer.name': 'B', 'newCustomer.email': `b-${Math.random().toString(36).slice(2)}@example.com`,
      productId: product.productId, amount: '9.99', currency: 'USD', sendEmail: 'false',
    }).toString(),
  });
  expect(res.statusCode).toBe(201);
  return /data-purchase-id="([^"]+)"/.exec(res.body)![1];
}

describe('events are recorded with their change and sent once per subscribed endpoint', () => {
  test('every event type reaches the endpoints subscribed to it, signed as Standard Webhooks says', async () => {
    const all = await receiver();
    const createdOnly = await receiver();
    const everything = await addEndpoint(all.url);
    const onlyCreated = await addEndpoint(createdOnly.url, ['purchase.created']);

    const viaApi = await purchaseViaApi();
    await api('POST', `/api/purchases/${viaApi}/revoke`);
    await api('POST', `/api/purchases/${viaApi}/restore`);
    await markReceiptFailed(h.orm.em.fork(), viaApi);
    const seeded = await seedPurchase(h, callers.orgId, product);
    const file = await h.app.inject({ method: 'GET', url: `/d/${seeded.token}/files/${product.fileId}` });
    expect(file.statusCode).toBe(200);
    await configureIntegration(h, callers.orgId, 'storefront-a');
    // An order whose SKUs match no product of this organisation: its entry ends Error at once.
    const platformOrder = await send(h.app, 'storefront-a', callers.orgId, orderBody('storefront-a', callers.orgId, String(Date.now())));
    expect(platformOrder.status).toBe(200);

    const expected = ['purchase.created', 'purchase.created', 'purchase.revoked', 'purchase.restored', 'receipt.failed', 'download.completed', 'delivery.failed'];
    await eventually(async () => (all.received.length >= expected.length ? true : undefined), 60_000, 'every event at the all-events endpoint');
    await eventually(async () => (createdOnly.received.length >= 2 ? true : undefined), 60_000, 'the purchases at the purchase.created endpoint');
    expect(all.received.map((r) => r.type).sort()).toEqual([...expected].sort());
    expect(createdOnly.received.map((r) => r.type)).toEqual(['purchase.created', 'purchase.created']);
    expect(all.uniqueIds().size).toBe(all.received.length);
    verifyAll(all, everything.secret);
    verifyAll(createdOnly, onlyCreated.secret);

    // The body: {id, type, timestamp, data}; data as the REST API shows the resource; no IP anywhere.
    const revoked = JSON.parse(all.received.find((r) => r.type === 'purchase.revoked')!.body);
    expect(revoked).toEqual({ id: expect.stringMatching(/^evt_[0-9a-f]{26}$/), type: 'purchase.revoked', timestamp: expect.any(String), data: expect.objectContaining({ id: viaApi, revokeReason: 'manual' }) });
    const download = JSON.parse(all.received.find((r) => r.type === 'download.completed')!.body);
    expect(download.data).toEqual({
      purchaseId: seeded.purchaseId, productId: product.productId, fileId: product.fileId, fileName: expect.any(String),
      bytes: product.fileBytes.length, completedAt: expect.any(String),
    });
    expect(all.received.map((r) => r.body).join('\n')).not.toMatch(/127\.0\.0\.1|"ip"/);
    const failed = JSON.parse(all.received.find((r) => r.type === 'delivery.failed')!.body);
    expect(failed.data).toEqual(expect.objectContaining({ id: platformOrder.body.deliveryIds![0], status: 'Error' }));

    // The events API lists them oldest first and pages from an id; each event tells its deliveries.
    // An event is listed once every transaction begun before its own has ended, anywhere on the
    // PostgreSQL server (another test file's among them): the list catches up. Waited for until each
    // type is there as often as expected (both sales), so the paging below reads a list that has settled.
    const listed = await eventually(async () => {
      const page = (await api('GET', '/api/events?limit=1000')).json() as Array<{ id: string; type: string }>;
      const types = page.map((e) => e.type);
      return expected.every((type) => types.filter((t) => t === type).length >= expected.filter((t) => t === type).length) ? page : undefined;
    }, 30_000, 'every event listed');
    expect(listed.map((e) => e.type)).toEqual(expect.arrayContaining(expected));
    // In the order their transactions began (a transaction that began first may record its event
    // a moment after another's: ids alone sort by the moment of each event).
    const began = await h.orm.em.fork().execute<Array<{ id: string }>>(
      `select id from outbound_event where id in (${listed.map(() => '?').join(', ')}) order by transaction_id, id`, listed.map((e) => e.id));
    expect(listed.map((e) => e.id)).toEqual(began.map((e) => e.id));
    const rest = (await api('GET', `/api/events?after=${listed[0].id}`)).json() as Array<{ id: string }>;
    expect(rest.map((e) => e.id)).toEqual(listed.slice(1).map((e) => e.id));
    const firstCreated = listed.find((e) => e.type === 'purchase.created')!;
    // Each endpoint's delivery is a run of its own: either may finish first.
    for (const endpoint of [onlyCreated, everything]) {
      await eventually(async () => ((await deliveryOf(firstCreated.id, endpoint.id))?.state === 'delivered' ? true : undefined), 30_000, 'delivery state');
    }
    expect(await deliveryOf(firstCreated.id, everything.id)).toEqual({ endpointId: everything.id, state: 'delivered', attempts: 1 });
    expect((await api('GET', '/api/events?type=purchase.revoked')).json()).toHaveLength(1);
  }, 120_000);

  test('a change that rolls back records no event', async () => {
    // Counted in the table, listed or not yet (the list waits for older transactions to end).
    const revocations = async () => Number((await h.orm.em.fork().execute<Array<{ n: string }>>(
      `select count(*) as n from outbound_event where organisation_id = ? and type = 'purchase.revoked'`, [callers.orgId]))[0].n);
    const before = await revocations();
    const em = h.orm.em.fork();
    await expect(em.transactional(async (tx) => {
      await tx.execute(`update purchase set revoked_at = now(), revoke_reason = 'manual' where organisation_id = ? and revoked_at is null`, [callers.orgId]);
      throw new Error('roll back');
    })).rejects.toThrow('roll back');
    expect(await revocations()).toBe(before);
  });
});

describe('delivery', () => {
  test('500 twice then 200: three requests with the same webhook-id, each attempt logged', async () => {
    const r = await receiver((n) => (n <= 2 ? { status: 500, body: 'not yet' } : { status: 200, body: 'thanks' }));
    const endpoint = await addEndpoint(r.url, ['purchase.created']);
    await purchaseViaApi();
    await eventually(async () => (r.received.length >= 3 ? true : undefined), 60_000, 'three attempts');
    expect(r.uniqueIds().size).toBe(1);
    verifyAll(r, endpoint.secret);
    const attempts = await eventually(async () => {
      const list = (await api('GET', `/api/webhook-endpoints/${endpoint.id}/attempts`)).json() as Array<{ attempt: number; status: number; responseExcerpt: string; eventId: string }>;
      return list.length === 3 ? list : undefined;
    }, 30_000, 'three attempts logged');
    expect(attempts.map((a) => [a.attempt, a.status, a.responseExcerpt])).toEqual([[3, 200, 'thanks'], [2, 500, 'not yet'], [1, 500, 'not yet']]);
    expect(await deliveryOf(attempts[0].eventId, endpoint.id)).toEqual({ endpointId: endpoint.id, state: 'delivered', attempts: 3 });
    // Paging: the page after the newest starts with the second.
    const next = (await api('GET', `/api/webhook-endpoints/${endpoint.id}/attempts?after=${(attempts[0] as unknown as { id: string }).id}&limit=1`)).json() as Array<{ attempt: number }>;
    expect(next.map((a) => a.attempt)).toEqual([2]);

    // Redeliver: one more request with the same webhook-id.
    expect((await api('POST', `/api/events/${attempts[0].eventId}/redeliver`, { endpointId: endpoint.id })).statusCode).toBe(202);
    await eventually(async () => (r.received.length >= 4 ? true : undefined), 30_000, 'the redelivery');
    expect(r.uniqueIds().size).toBe(1);
  }, 120_000);

  test('a first delivery handed over again after its run has ended sends nothing more', async () => {
    const r = await receiver(() => ({ status: 200, body: 'thanks' }));
    const endpoint = await addEndpoint(r.url, ['purchase.created']);
    await purchaseViaApi();
    const [{ eventId }] = await eventually(async () => {
      const list = (await api('GET', `/api/webhook-endpoints/${endpoint.id}/attempts`)).json() as Array<{ eventId: string }>;
      return list.length > 0 ? list : undefined;
    }, 30_000, 'the first attempt logged');
    const target = { eventId, endpointId: endpoint.id };
    const run = h.temporal.workflow.getHandle(outboundDeliveryWorkflowId(target));
    await run.result();
    const first = await run.describe();
    // Bulk work, after sales and refunds, and under its organisation's fairness key like every run.
    expect(first.priority).toEqual(expect.objectContaining({ priorityKey: 4, fairnessKey: callers.orgId }));
    // The outbox hands a row over again when the engine took its start but the answer was lost.
    await enqueueDispatches(h.orm.em.fork(), [{ kind: 'deliver-event', orgId: callers.orgId, workflowId: outboundDeliveryWorkflowId(target), payload: target }]);
    await eventually(async () => ((await h.orm.em.fork().execute('select 1 from workflow_dispatch where workflow_id = ?', [outboundDeliveryWorkflowId(target)])).length === 0
      ? true : undefined), 30_000, 'the row handed over');
    expect((await run.describe()).runId).toBe(first.runId);
    expect(await deliveryOf(eventId, endpoint.id)).toEqual({ endpointId: endpoint.id, state: 'delivered', attempts: 1 });
    expect(r.received).toHaveLength(1);
  }, 120_000);

  test('a redelivery asked while the run is still open is one more attempt, not joined and lost', async () => {
    // 500 three times, then 200; the second answer comes late, so the redelivery finds its run open.
    const r = await receiver((n) => (n <= 3 ? { status: 500, body: 'not yet', delayMs: n === 2 ? 2000 : 0 } : { status: 200, body: 'thanks' }));
    const endpoint = await addEndpoint(r.url, ['purchase.created']);
    await purchaseViaApi();
    await eventually(async () => (r.received.length >= 2 ? true : undefined), 30_000, 'the second attempt');
    const [{ eventId }] = (await api('GET', `/api/webhook-endpoints/${endpoint.id}/attempts`)).json() as Array<{ eventId: string }>;
    expect((await api('POST', `/api/events/${eventId}/redeliver`, { endpointId: endpoint.id })).statusCode).toBe(202);
    // The schedule (two retries) alone would have ended the delivery failed after the third request.
    await eventually(async () => (r.received.length >= 4 ? true : undefined), 30_000, 'a fourth request');
    expect(await eventually(async () => {
      const delivery = await deliveryOf(eventId, endpoint.id);
      return delivery?.state === 'delivered' ? delivery : undefined;
    }, 30_000, 'the delivery delivered')).toEqual({ endpointId: endpoint.id, state: 'delivered', attempts: 4 });
    expect(r.uniqueIds().size).toBe(1);
  }, 120_000);

  test('410 disables the endpoint at once, and its owners and admins get one email', async () => {
    const r = await receiver(() => ({ status: 410, body: 'gone' }));
    const endpoint = await addEndpoint(r.url, ['purchase.created']);
    await purchaseViaApi();
    const disabled = await eventually(async () => {
      const e = (await api('GET', `/api/webhook-endpoints/${endpoint.id}`)).json() as { enabled: boolean; disabledReason: string | null };
      return e.enabled ? undefined : e;
    }, 60_000, 'the endpoint disabled');
    expect(disabled.disabledReason).toMatch(/410/);
    await h.mailbox.waitFor((m) => m.subject.includes('Webhook endpoint disabled') && m.text.includes(r.url), 30_000);
    // A disabled endpoint receives nothing: the next event has no delivery for it.
    const newest = await purchaseViaApi();
    const [created] = await listedEvents<{ id: string; data: { id: string } }>(h.app, callers.owner, 'purchase.created', (e) => e.data.id === newest);
    expect((await api('GET', `/api/events/${created.id}`)).json().deliveries).toEqual([]);
    expect(r.received).toHaveLength(1);
  }, 120_000);

  test('the email of a disabled endpoint still goes when the mail relay refuses it at first', async () => {
    const r = await receiver(() => ({ status: 410, body: 'gone' }));
    const endpoint = await addEndpoint(r.url, ['purchase.created']);
    const refusedBefore = h.mailbox.rejections().length;
    h.mailbox.setReject({ match: () => true, code: 451 });
    try {
      await purchaseViaApi();
      await eventually(async () => (h.mailbox.rejections().length > refusedBefore ? true : undefined), 60_000, 'the relay to refuse the email');
      expect((await api('GET', `/api/webhook-endpoints/${endpoint.id}`)).json()).toEqual(expect.objectContaining({ enabled: false }));
    } finally {
      h.mailbox.setReject(undefined);
    }
    await h.mailbox.waitFor((m) => m.subject.includes('Webhook endpoint disabled') && m.text.includes(r.url), 30_000);
    expect(h.mailbox.messages().filter((m) => m.subject.includes('Webhook endpoint disabled') && m.text.includes(r.url))).toHaveLength(1);
    expect(r.received).toHaveLength(1);
  }, 120_000);

  test('an endpoint failing past OUTBOUND_DISABLE_AFTER is disabled with one email', async () => {
    const r = await receiver(() => ({ status: 503 }));
    const endpoint = await addEndpoint(r.url, ['purchase.created']);
    // Its failing streak began two hours ago (the setting is 1 h): the next failure disables it.
    await h.orm.em.fork().execute(`update webhook_endpoint set failing_since = now() - interval '2 hours' where id = ?`, [endpoint.id]);
    await purchaseViaApi();
    const disabled = await eventually(async () => {
      const e = (await api('GET', `/api/webhook-endpoints/${endpoint.id}`)).json() as { enabled: boolean; disabledReason: string | null };
      return e.enabled ? undefined : e;
    }, 60_000, 'the endpoint disabled');
    expect(disabled.disabledReason).toMatch(/every attempt failed since/);
    // Its delivery ends with the attempt that disabled it, not after the next retry's wait.
    const [{ eventId }] = (await api('GET', `/api/webhook-endpoints/${endpoint.id}/attempts`)).json() as Array<{ eventId: string }>;
    expect(await deliveryOf(eventId, endpoint.id)).toEqual({ endpointId: endpoint.id, state: 'failed', attempts: 1 });
    await h.mailbox.waitFor((m) => m.subject.includes('Webhook endpoint disabled') && m.text.includes(r.url), 30_000);
    expect(r.received).toHaveLength(1);
    // Enabled again by hand: its streak starts afresh.
    const enabled = (await api('PATCH', `/api/webhook-endpoints/${endpoint.id}`, { enabled: true })).json() as { enabled: boolean; disabledReason: string | null };
    expect(enabled).toEqual(expect.objectContaining({ enabled: true, disabledReason: null }));
  }, 120_000);

  test('a receiver that never answers is tried on the schedule (15 s each) and the delivery ends failed', async () => {
    const r = await receiver(() => 'hang');
    const endpoint = await addEndpoint(r.url, ['purchase.created']);
    await purchaseViaApi();
    const attempts = await eventually(async () => {
      const list = (await api('GET', `/api/webhook-endpoints/${endpoint.id}/attempts`)).json() as Array<{ eventId: string; status: number | null; error: string }>;
      return list.length === 3 ? list : undefined;
    }, 100_000, 'three attempts');
    expect(attempts.map((a) => [a.status, a.error])).toEqual(Array(3).fill([null, 'no answer within 15 s']));
    await eventually(async () => ((await deliveryOf(attempts[0].eventId, endpoint.id))?.state === 'failed' ? true : undefined), 30_000, 'failed');
    expect(r.uniqueIds().size).toBe(1);
  }, 150_000);

  test('a redirect is not followed', async () => {
    const target = await receiver();
    const r = await receiver(() => ({ status: 302, headers: { location: target.url } }));
    const endpoint = await addEndpoint(r.url);
    const res = await api('POST', `/api/webhook-endpoints/${endpoint.id}/test`);
    expect(res.json()).toEqual({ status: 302, durationMs: expect.any(Number), error: 'HTTP 302: redirects are not followed' });
    expect(target.received).toHaveLength(0);
  });
});

test('an endpoint\'s slots are shared by every worker: 10 requests at most, a dead holder\'s lease runs out', async () => {
  const r = await receiver();
  // A type nothing sends yet: no delivery of another test takes one of its slots meanwhile.
  const endpoint = await addEndpoint(r.url, ['license.activated']);
  // Each caller stands for an attempt in some worker process: the database is all they share (a
  // dozen at once: the test's pool is shared with the harness's worker and waits 1 s at most).
  let open = 0;
  let most = 0;
  let release!: () => void;
  const released = new Promise<void>((resolve) => { release = resolve; });
  const attempt = () => withEndpointSlot(h.orm.em.fork(), endpoint.id, MAX_IN_FLIGHT_PER_ENDPOINT, async () => {
    open += 1;
    most = Math.max(most, open);
    await released;
    open -= 1;
    return 'sent';
  });
  const settled: Array<{ busy: boolean }> = [];
  const first = Array.from({ length: MAX_IN_FLIGHT_PER_ENDPOINT + 2 }, () => attempt().then((answer) => { settled.push(answer); return answer; }));
  await eventually(async () => (open === MAX_IN_FLIGHT_PER_ENDPOINT && settled.length === 2 ? true : undefined), 30_000, 'ten slots taken, two busy');
  expect(settled.every((answer) => answer.busy)).toBe(true);
  release();
  const done = await Promise.all(first);
  expect(done.filter((a) => !a.busy)).toHaveLength(MAX_IN_FLIGHT_PER_ENDPOINT);
  expect(most).toBe(MAX_IN_FLIGHT_PER_ENDPOINT);
  await expect(h.orm.em.fork().execute('select 1 from outbound_endpoint_lease where endpoint_id = ?', [endpoint.id])).resolves.toHaveLength(0);

  // A worker killed while holding a slot: its lease stands until it runs out, then the slot is free.
  await h.orm.em.fork().execute(
    `insert into outbound_endpoint_lease (endpoint_id, slot, holder, until)
     select ?, s, gen_random_uuid(), now() + interval '1 hour' from generate_series(0, 9) s`, [endpoint.id],
  );
  await expect(withEndpointSlot(h.orm.em.fork(), endpoint.id, MAX_IN_FLIGHT_PER_ENDPOINT, async () => 'sent')).resolves.toEqual({ busy: true });
  await h.orm.em.fork().execute(`update outbound_endpoint_lease set until = now() - interval '1 second' where endpoint_id = ? and slot = 3`, [endpoint.id]);
  await expect(withEndpointSlot(h.orm.em.fork(), endpoint.id, MAX_IN_FLIGHT_PER_ENDPOINT, async () => 'sent')).resolves.toEqual({ busy: false, value: 'sent' });
});

test('/metrics has the deliveries waiting and the endpoints disabled', async () => {
  const r = await receiver();
  const endpoint = await addEndpoint(r.url);
  await api('PATCH', `/api/webhook-endpoints/${endpoint.id}`, { enabled: false });
  const text = (await h.app.inject({ method: 'GET', url: '/metrics' })).body;
  expect(text).toMatch(/^delivery_outbound_deliveries_waiting \d+$/m);
  expect(Number(/^delivery_outbound_endpoints_disabled (\d+)$/m.exec(text)?.[1])).toBeGreaterThanOrEqual(1);
});

describe('secrets', () => {
  test('the secret is shown once; send test pings and logs the attempt', async () => {
    const r = await receiver(() => ({ status: 204 }));
    const endpoint = await addEndpoint(r.url);
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const listed = (await api('GET', '/api/webhook-endpoints')).json() as object[];
    expect(JSON.stringify(listed)).not.toContain('whsec_');
    expect(JSON.stringify((await api('GET', `/api/webhook-endpoints/${endpoint.id}`)).json())).not.toContain('whsec_');
    const [{ secret }] = await h.orm.em.fork().execute<Array<{ secret: string }>>('select secret from webhook_endpoint where id = ?', [endpoint.id]);
    expect(secret).toMatch(/^enc:v1:/);

    const ping = (await api('POST', `/api/webhook-endpoints/${endpoint.id}/test`)).json();
    expect(ping).toEqual({ status: 204, durationMs: expect.any(Number), error: null });
    expect(JSON.parse(r.received[0].body)).toEqual({ id: r.received[0].id, type: 'ping', timestamp: expect.any(String), data: { endpointId: endpoint.id } });
    verifyAll(r, endpoint.secret);
    const [attempt] = (await api('GET', `/api/webhook-endpoints/${endpoint.id}/attempts`)).json() as Array<{ type: string; status: number }>;
    expect(attempt).toEqual(expect.objectContaining({ type: 'ping', status: 204 }));
  });

  test('rotation: both signatures verify during the overlap, only the new one after', async () => {
    const r = await receiver();
    const endpoint = await addEndpoint(r.url);
    const rotated = (await api('POST', `/api/webhook-endpoints/${endpoint.id}/rotate-secret`)).json() as { secret: string };
    expect(rotated.secret).not.toBe(endpoint.secret);
    await api('POST', `/api/webhook-endpoints/${endpoint.id}/test`);
    const during = r.received[0];
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(() => new Webhook(endpoint.secret).verify(during.body, during.headers as Record<string, string>)).not.toThrow();
    expect(() => new Webhook(rotated.secret).verify(during.body, during.headers as Record<string, string>)).not.toThrow();

    await h.orm.em.fork().execute(`update webhook_endpoint set previous_secret_until = now() - interval '1 second' where id = ?`, [endpoint.id]);
    await api('POST', `/api/webhook-endpoints/${endpoint.id}/test`);
    const after = r.received[1];
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(() => new Webhook(rotated.secret).verify(after.body, after.headers as Record<string, string>)).not.toThrow();
    expect(() => new Webhook(endpoint.secret).verify(after.body, after.headers as Record<string, string>)).toThrow();
  });
});

describe('addresses', () => {
  test.each([
    ['https://localhost/hook', /resolves to (127\.0\.0\.1|::1), a loopback address/],
    ['https://127.0.0.1/hook', /127\.0\.0\.1 is a loopback address/],
    ['https://10.1.2.3/hook', /a private address/],
    ['https://169.254.169.254/latest', /a link-local address/],
    ['https://[::1]/hook', /a loopback address/],
    ['https://[::ffff:127.0.0.1]/hook', /an IPv4-mapped IPv6 address/],
    ['https://[::ffff:a00:1]/hook', /an IPv4-mapped IPv6 address/],
    ['http://example.com/hook', /the scheme must be https/],
    ['ftp://example.com/hook', /the scheme must be https/],
  ])('%s is refused without OUTBOUND_WEBHOOKS_ALLOW_PRIVATE', async (url, reason) => {
    await expect(checkEndpointUrl(url, false)).rejects.toThrow(reason);
  });

  test('other schemes are refused even with the setting; the API answers 400 with the reason', async () => {
    await expect(checkEndpointUrl('file:///etc/passwd', true)).rejects.toThrow(/scheme/);
    const res = await api('POST', '/api/webhook-endpoints', { url: 'ftp://example.com/x' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatch(/scheme must be https/);
    expect((await api('POST', '/api/webhook-endpoints', { url: 'https://example.com/x', events: ['order.made'] })).statusCode).toBe(400);
  });

  test('at connection time, a name that resolves inward is refused for that attempt (nothing is sent)', async () => {
    const r = await receiver();
    const port = new URL(r.url).port;
    const attempt = (url: string) => sendWebhook({ url, webhookId: 'evt_x', body: '{}', secrets: [`whsec_${Buffer.alloc(32).toString('base64')}`], allowPrivate: false });
    expect(await attempt(`https://localhost:${port}/hook`)).toEqual(expect.objectContaining({
      status: null, error: expect.stringMatching(/^refused: localhost resolves to .*loopback/),
    }));
    expect((await attempt(`https://127.0.0.1:${port}/hook`)).error).toMatch(/^refused: 127\.0\.0\.1 is a loopback address/);
    // Saved while the setting was on, sent after it was turned off.
    expect((await attempt(r.url)).error).toBe('refused: http is not https');
    expect(r.received).toHaveLength(0);
  });
});

describe('access', () => {
  test('members get 403 everywhere here; another organisation\'s endpoint or event is 404', async () => {
    const r = await receiver();
    const endpoint = await addEndpoint(r.url);
    const [event] = (await api('GET', '/api/events?limit=1')).json() as Array<{ id: string }>;
    const routes: Array<['GET' | 'POST' | 'PATCH' | 'DELETE', string, object?]> = [
      ['GET', '/api/webhook-endpoints'],
      ['POST', '/api/webhook-endpoints', { url: r.url }],
      ['GET', `/api/webhook-endpoints/${endpoint.id}`],
      ['PATCH', `/api/webhook-endpoints/${endpoint.id}`, { description: 'x' }],
      ['DELETE', `/api/webhook-endpoints/${endpoint.id}`],
      ['POST', `/api/webhook-endpoints/${endpoint.id}/rotate-secret`],
      ['POST', `/api/webhook-endpoints/${endpoint.id}/test`],
      ['GET', `/api/webhook-endpoints/${endpoint.id}/attempts`],
      ['GET', '/api/events'],
      ['GET', `/api/events/${event.id}`],
      ['POST', `/api/events/${event.id}/redeliver`, {}],
    ];
    for (const [method, url, payload] of routes) {
      expect([method, url, (await api(method, url, payload, callers.member)).statusCode]).toEqual([method, url, 403]);
    }
    for (const [method, url, payload] of routes.filter(([, url]) => url.includes(endpoint.id) || url.includes(event.id))) {
      expect([method, url, (await api(method, url, payload, callers.other)).statusCode]).toEqual([method, url, 404]);
    }
    expect((await api('GET', '/api/events', undefined, callers.other)).json()).toEqual([]);
    expect((await api('GET', '/api/webhook-endpoints', undefined, callers.other)).json()).toEqual([]);
  });

  test('at most 10 endpoints per organisation', async () => {
    const r = await receiver();
    const made: string[] = [];
    for (let i = 0; i < 10; i += 1) made.push((await addEndpoint(r.url)).id);
    const res = await api('POST', '/api/webhook-endpoints', { url: r.url });
    expect(res.statusCode).toBe(409);
  });
});

test('GET /api/events?after= never skips an event whose transaction commits after a newer event was listed', async () => {
  // Two writers, as two API processes: the first records its event and is still committing while the
  // second records a newer one and commits. A reader that listed the newer one must still get the older.
  const slow = new PgClient({ connectionString: h.config.databaseUrl });
  await slow.connect();
  try {
    await slow.query('begin');
    await slow.query(`select record_outbound_event($1, 'delivery.failed', gen_random_uuid(), null)`, [callers.orgId]);
    const [{ id: older }] = (await slow.query(
      'select id from outbound_event where organisation_id = $1 order by id desc limit 1', [callers.orgId],
    )).rows as Array<{ id: string }>;
    await h.orm.em.fork().execute(`select record_outbound_event(?, 'delivery.failed', gen_random_uuid(), null)`, [callers.orgId]);
    const seen: string[] = [];
    const readMore = async () => {
      const after = seen.length === 0 ? '' : `&after=${seen[seen.length - 1]}`;
      const page = (await api('GET', `/api/events?limit=1000${after}`)).json() as Array<{ id: string }>;
      seen.push(...page.map((e) => e.id));
    };
    await readMore();
    expect(seen).not.toContain(older);
    await slow.query('commit');
    // Listed once every transaction older than it has ended: any transaction of the cluster (another
    // database's, under a loaded test run) can hold that back for a moment, never skip it.
    await eventually(async () => {
      await readMore();
      return seen.includes(older) ? true : undefined;
    }, 30_000, 'the older event to be listed');
    expect(new Set(seen).size).toBe(seen.length);
  } finally {
    await slow.end();
  }
});
