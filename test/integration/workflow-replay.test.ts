/**
 * Determinism guard: recorded histories of real runs (test/fixtures/histories) are replayed
 * against the workflow code as it is now. Renaming an activity, reordering calls or changing
 * what a workflow awaits makes this fail before it breaks runs in flight in production.
 *
 * Histories live in one folder per workflow shape (the day it shipped); every folder is replayed,
 * so runs of an older shape still in flight stay safe. To record a new shape (after a deliberate,
 * versioned change, e.g. behind `patched()`):
 *   RECORD_HISTORIES=<yyyy-mm-dd> npx jest test/integration/workflow-replay.test.ts
 */
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { startHarness, type Harness } from '../helpers/harness';
import { ProductVersion, WebhookDelivery } from '../../src/db/entities';
import { ENCRYPTED_ENCODING, EncryptionCodec } from '../../src/temporal/encryption-codec';
import {
  edit,
  eventually,
  finalEntry,
  orderBody,
  REFUND_SAMPLES,
  revocationBody,
  seedWebhookOrg,
  send,
  settled,
  withEmail,
  withOrderId,
  type WebhookOrg,
} from '../helpers/webhooks';

const HISTORIES = path.resolve(__dirname, '../fixtures/histories');
const recordInto = process.env.RECORD_HISTORIES;

/** Every payload of a history (any depth: inputs, results, signals, headers) with the codec's sealing undone. */
async function decrypted<T>(value: T, codec: EncryptionCodec): Promise<T> {
  if (Array.isArray(value)) return Promise.all(value.map((v) => decrypted(v, codec))) as Promise<T>;
  if (value === null || typeof value !== 'object' || ArrayBuffer.isView(value)) return value;
  const record = value as Record<string, unknown>;
  const metadata = record.metadata as Record<string, Uint8Array> | undefined;
  if (metadata?.encoding && Buffer.from(metadata.encoding).toString() === ENCRYPTED_ENCODING) {
    const [plain] = await codec.decode([record as never]);
    return plain as T;
  }
  for (const key of Object.keys(record)) record[key] = await decrypted(record[key], codec);
  return value;
}

/** Runs the scenarios whose histories are kept, and writes each run's history. */
async function record(): Promise<void> {
  const h: Harness = await startHarness({ mailbox: { reject: { match: (a) => a === 'refused@example.com', code: 550 } } });
  const folder = path.join(HISTORIES, recordInto!);
  try {
    const org: WebhookOrg = await seedWebhookOrg(h);
    const histories: Record<string, string> = {};
    const codec = new EncryptionCodec(h.keyRing, { acceptPlaintext: false });
    const keep = async (name: string, workflowId: string) => {
      // Stored decrypted: the replay worker has no key (payloads are sealed at rest since 2026-11-25).
      const history = await decrypted(await h.temporal.workflow.getHandle(workflowId).fetchHistory(), codec);
      // protobufjs' own JSON form (enum names, longs as strings), read back by History.fromObject.
      histories[name] = JSON.stringify(history);
    };
    const deliver = async (body: Buffer, platform: 'cart-e' | 'storefront-a' = 'cart-e') => {
      const res = await send(h.app, platform, org.orgId, body);
      const entry = await finalEntry(h, res.body.deliveryIds![0]);
      await settled(h, entry.id);
      return entry;
    };
    const cartE = (saleId: string, email = 'buyer@example.com') =>
      withOrderId('cart-e', withEmail('cart-e', orderBody('cart-e', org.orgId), email), saleId);

    const fulfilled = await deliver(cartE('replay-fulfilled'));
    await keep('fulfilment-fulfilled', fulfilled.workflowIds[0]);

    const joined = await Promise.all([1, 2, 3].map(() => send(h.app, 'cart-e', org.orgId, cartE('replay-joined'))));
    const joinedEntries = await Promise.all(joined.map((r) => finalEntry(h, r.body.deliveryIds![0])));
    await Promise.all(joinedEntries.map((e) => settled(h, e.id)));
    await keep('fulfilment-joined-duplicates', joinedEntries[0].workflowIds[0]);

    const refused = await deliver(cartE('replay-refused', 'refused@example.com'));
    await keep('fulfilment-receipt-refused-alert', refused.workflowIds[0]);
    h.mailbox.setReject(undefined);
    const resent = await deliver(cartE('replay-refused', 'refused@example.com'));
    await keep('fulfilment-receipt-resent', resent.workflowIds[0]);
    const duplicate = await deliver(cartE('replay-refused', 'refused@example.com'));
    await keep('fulfilment-duplicate', duplicate.workflowIds[0]);

    // The re-send race: a redelivery joins the failed run while its alert is still deferred.
    h.mailbox.setReject([
      { match: (a) => a === 'race@example.com', code: 550 },
      { match: (a) => a.startsWith('owner-'), code: 451 },
    ]);
    const raced = await send(h.app, 'cart-e', org.orgId, cartE('replay-race', 'race@example.com'));
    const racedEntry = await finalEntry(h, raced.body.deliveryIds![0]);
    h.mailbox.setReject({ match: (a) => a.startsWith('owner-'), code: 451 });
    const redelivered = await send(h.app, 'cart-e', org.orgId, cartE('replay-race', 'race@example.com'));
    await finalEntry(h, redelivered.body.deliveryIds![0]);
    h.mailbox.setReject(undefined);
    await settled(h, racedEntry.id);
    await keep('fulfilment-resend-round', racedEntry.workflowIds[0]);

    const unmatched = edit(edit(withOrderId('storefront-a', orderBody('storefront-a', org.orgId), '424242'), '"sku": "ebook-pro"', '"sku": "nope-1"'), '"sku": "course-basic"', '"sku": "nope-2"');
    const alerted = await h.orm.em.fork().findOneOrFail(WebhookDelivery, (await send(h.app, 'storefront-a', org.orgId, unmatched)).body.deliveryIds![0]);
    await settled(h, alerted.id);
    await keep('order-alert', alerted.workflowIds[0]);

    const sale = await h.app.inject({
      method: 'POST',
      url: '/api/purchases',
      headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({
        customerId: 'new', 'newCustomer.email': 'api-buyer@example.com', productId: org.ebook.productId,
        amount: '10', currency: 'EUR', sendEmail: 'true',
      }).toString(),
    });
    if (sale.statusCode !== 201) throw new Error(`sale failed: ${sale.statusCode} ${sale.body}`);
    // The sale's run starts from the outbox, once the dispatcher has taken its row.
    const runs = await eventually(async () => {
      const found = [];
      for await (const run of h.temporal.workflow.list({ query: `OrgId = "${org.orgId}" AND Platform = "api"` })) found.push(run.workflowId);
      return found.length > 0 ? found : undefined;
    }, 30_000, 'the sale\'s run');
    await h.temporal.workflow.getHandle(runs[0]).result();
    await keep('fulfilment-api-sale', runs[0]);

    // Refunds (decisions §9): one of a fulfilled sale, and one that comes before its order.
    await deliver(cartE('replay-refund'));
    const refund = await send(h.app, 'cart-e', org.orgId, revocationBody('cart-e', REFUND_SAMPLES['cart-e'], 'replay-refund'));
    const refundEntry = await finalEntry(h, refund.body.deliveryIds![0]);
    await keep('revocation-refund', refundEntry.workflowIds[0]);
    const early = await send(h.app, 'cart-e', org.orgId, revocationBody('cart-e', REFUND_SAMPLES['cart-e'], 'replay-early'));
    await finalEntry(h, early.body.deliveryIds![0]);
    const late = await deliver(cartE('replay-early'));
    await keep('fulfilment-revoked-before-order', late.workflowIds[0]);

    // A version notification (decisions §12) to the buyers of the ebook so far.
    const version = h.orm.em.fork().create(ProductVersion, { product: org.ebook.productId, version: '2.0.0' });
    await h.orm.em.fork().persistAndFlush(version);
    await h.orm.em.fork().execute('update product set active_version_id = ? where id = ?', [version.id, org.ebook.productId]);
    const notified = await h.app.inject({
      method: 'POST', url: `/api/products/${org.ebook.productId}/versions/${version.id}/notify`, headers: { authorization: `Bearer ${org.apiKey}` },
    });
    if (notified.statusCode !== 202) throw new Error(`notify failed: ${notified.statusCode} ${notified.body}`);
    const notifyId = (notified.json() as { workflowId: string }).workflowId;
    await eventually(async () => {
      try {
        return (await h.temporal.workflow.getHandle(notifyId).describe()).status.name === 'COMPLETED' ? true : undefined;
      } catch {
        return undefined;
      }
    }, 60_000, 'the notification run');
    await keep('version-notification', notifyId);

    await mkdir(folder, { recursive: true });
    for (const [name, json] of Object.entries(histories)) {
      await writeFile(path.join(folder, `${name}.json`), `${JSON.stringify(JSON.parse(json), null, 1)}\n`);
    }
  } finally {
    await h.close();
  }
}

test.each([
  ['the plain bundle', 'TEST_WORKFLOW_BUNDLE'],
  ['the traced bundle (OpenTelemetry interceptors)', 'TEST_TRACED_WORKFLOW_BUNDLE'],
])('recorded workflow histories of every shape replay without nondeterminism on %s', async (_name, bundleVariable) => {
  if (recordInto && bundleVariable === 'TEST_WORKFLOW_BUNDLE') await record();
  const files = (await readdir(HISTORIES, { recursive: true })).filter((f) => f.endsWith('.json')).sort();
  expect(files.length).toBeGreaterThanOrEqual(16);
  const histories = await Promise.all(files.map(async (file) => ({
    workflowId: file.replace(/\.json$/, ''),
    history: temporal.api.history.v1.History.fromObject(JSON.parse(await readFile(path.join(HISTORIES, file), 'utf8'))),
  })));

  const results: Array<{ workflowId: string; error?: string }> = [];
  const replays = Worker.runReplayHistories(
    { workflowBundle: { code: await readFile(process.env[bundleVariable]!, 'utf8') } },
    histories,
  );
  for await (const result of replays) {
    results.push({ workflowId: result.workflowId, ...(result.error ? { error: String(result.error) } : {}) });
  }
  results.sort((a, b) => a.workflowId.localeCompare(b.workflowId));
  expect(results).toEqual(histories.map((h) => ({ workflowId: h.workflowId })));
});
