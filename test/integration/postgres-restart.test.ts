/**
 * PostgreSQL stopped and started under a running service (security review, issue 23: M6 and L12).
 * This file runs its own PostgreSQL (embedded, its own data dir and port): the shared test server
 * is never stopped. Stops are fast shutdowns, as `pg_ctl stop` makes by default.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Purchase, SentEmail } from '../../src/db/entities';
import type { DevMail } from '../../src/dev/dev-mailbox';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/dev/embedded-postgres';
import { silentLogger } from '../../src/dev/logger';
import { startHarness, type Harness } from '../helpers/harness';
import { finalEntry, orderBody, seedWebhookOrg, settled, signedRequest, withEmail, withOrderId, type WebhookOrg } from '../helpers/webhooks';

let dataDir: string;
let pg: EmbeddedPostgres;
let h: Harness;
let org: WebhookOrg;

/** Starts (again) the cluster of this file's data dir: same port and password every time. */
async function startPostgres(): Promise<void> {
  const port = pg?.port;
  pg = await startEmbeddedPostgres({ dataDir }, silentLogger);
  if (port !== undefined && pg.port !== port) throw new Error(`PostgreSQL came back on port ${pg.port}, not ${port}`);
}

/** Which message the relay accepts only after stopping PostgreSQL (once), and the start that follows. */
let stopBeforeAccepting: ((mail: DevMail) => boolean) | undefined;
let restarted: Promise<void> | undefined;

/**
 * The relay's side of M6: the message is in, PostgreSQL is stopped, then the 250 goes out and the
 * server starts again. Its start takes far longer than the sender's first try to record the result,
 * which so meets a server that is down.
 */
async function beforeAccept(mail: DevMail): Promise<void> {
  if (!stopBeforeAccepting?.(mail)) return;
  stopBeforeAccepting = undefined;
  await pg.stop();
  restarted = new Promise<void>((resolve) => setImmediate(resolve)).then(startPostgres);
}

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'delivery-test-pg-restart-'));
  await startPostgres();
  h = await startHarness({ postgresAdminUrl: pg.url, mailbox: { beforeAccept } });
  org = await seedWebhookOrg(h);
}, 120_000);

afterAll(async () => {
  await restarted;
  await h?.close();
  await pg?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

const cartE = (email: string, saleId: string) => withOrderId('cart-e', withEmail('cart-e', orderBody('cart-e', org.orgId), email), saleId);

test('M6: a receipt the relay accepted just before PostgreSQL went down is recorded once it is back, never sent again', async () => {
  const email = 'restart@example.com';
  stopBeforeAccepting = (mail) => mail.to.includes(email);
  const request = signedRequest('cart-e', org.orgId, cartE(email, 'sale-restart'));
  const res = await h.app.inject({ method: 'POST', url: request.path, headers: request.headers, payload: request.body });
  expect(res.statusCode).toBe(200);
  const [deliveryId] = (res.json() as { deliveryIds: string[] }).deliveryIds;

  await h.mailbox.waitFor((m) => m.to.includes(email), 30_000);
  await restarted;
  const entry = await finalEntry(h, deliveryId, 60_000);
  expect(entry.status).toBe('Success');
  expect(entry.items.getItems().map((i) => i.outcome)).toEqual(['fulfilled']);
  await settled(h, deliveryId);

  const receipts = h.mailbox.messages().filter((m) => m.to.includes(email));
  expect(receipts).toHaveLength(1);
  const em = h.orm.em.fork();
  const purchase = await em.findOneOrFail(Purchase, { organisation: org.orgId, externalOrderId: 'sale-restart' });
  expect(purchase.receiptStatus).toBe('sent');
  const logged = await em.find(SentEmail, { kind: 'receipt', businessKey: { $like: `receipt:${purchase.id}:%` } });
  expect(logged.map((s) => s.status)).toEqual(['sent']);
  // The Message-ID names the send's business key: were it ever sent again, mail systems would see one message.
  expect(receipts[0].messageId).toBe(`<${logged[0].businessKey.replaceAll(':', '.')}@delivery.test>`);
  expect(logged[0].messageId).toBe(receipts[0].messageId);
}, 120_000);

test('L12: while PostgreSQL is down a delivery is answered 503 with Retry-After; once it is back, the same delivery is recorded', async () => {
  const request = signedRequest('cart-e', org.orgId, cartE('down@example.com', 'sale-down'));
  const deliver = () => h.app.inject({ method: 'POST', url: request.path, headers: request.headers, payload: request.body });
  await pg.stop();
  try {
    const refused = await deliver();
    expect(refused.statusCode).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.json()).toEqual({ error: 'service unavailable' });
  } finally {
    await startPostgres();
  }
  const accepted = await deliver();
  expect(accepted.statusCode).toBe(200);
  const entry = await finalEntry(h, (accepted.json() as { deliveryIds: string[] }).deliveryIds[0]);
  expect(entry.status).toBe('Success');
  await settled(h, entry.id);
}, 120_000);
