/**
 * The privacy findings of the security review (issue 23) that are not about spans (those are in
 * tracing.test.ts): one describe each, every test here failed on the code before its fix.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { Client, Connection } from '@temporalio/client';
import { decodeOptionalFailureToOptionalError, loadDataConverter } from '@temporalio/common/lib/internal-non-workflow';
import { buildApiApp } from '../../src/roles';
import { encryptedPayloads } from '../../src/temporal/encryption-codec';
import { startHarness, type Harness } from '../helpers/harness';
import { EMAIL_ADDRESS } from '../helpers/privacy';
import { eventually, finalEntry, orderBody, seedWebhookOrg, send, settled, withEmail, withOrderId, type WebhookOrg } from '../helpers/webhooks';

const REFUSED = 'refused-review@example.com';

let h: Harness;
let org: WebhookOrg;
let plain: Client;

beforeAll(async () => {
  // The relay's rejections name the recipient, as real relays do. The receipt's first attempt, made
  // inside the workflow task, answers the run with its failure as data (sealed in its result); the
  // next attempt is an activity, whose failure the history keeps as a failure: a 451, then a 550.
  let tries = 0;
  h = await startHarness({
    mailbox: {
      reject: [
        { match: (a) => a === REFUSED && tries++ === 0, code: 451, message: `4.2.1 <${REFUSED}>: Recipient address deferred` },
        { match: (a) => a === REFUSED, code: 550, message: `5.1.1 <${REFUSED}>: Recipient address rejected` },
      ],
    },
  });
  org = await seedWebhookOrg(h);
  // What anyone who reaches Temporal has: a client without the service's key.
  plain = new Client({ connection: await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS! }), namespace: h.config.temporal.namespace });
});
afterAll(async () => {
  await plain?.connection.close();
  await h?.close();
});

/** A history as an outsider reads it: its JSON, and each base64 field decoded. */
async function historyText(workflowId: string): Promise<string> {
  const history = JSON.stringify(await plain.workflow.getHandle(workflowId).fetchHistory());
  const decoded = [...history.matchAll(/"([A-Za-z0-9+/]{8,}={0,2})"/g)].map((m) => Buffer.from(m[1], 'base64').toString('latin1'));
  return [history, ...decoded].join('\n');
}

describe('L1. failure messages carry no personal data into Temporal history', () => {
  test('a receipt the relay refuses: the failed activity is in the history, the recipient is not', async () => {
    const body = withOrderId('cart-e', withEmail('cart-e', orderBody('cart-e', org.orgId), REFUSED), 'review-refused');
    const res = await send(h.app, 'cart-e', org.orgId, body);
    const entry = await finalEntry(h, res.body.deliveryIds![0]);
    await settled(h, entry.id);
    expect(h.mailbox.rejections().map((r) => [r.address, r.code])).toEqual([[REFUSED, 451], [REFUSED, 550]]);
    const text = await historyText(entry.workflowIds[0]);
    expect(text).toContain('PermanentSmtpFailure');
    expect(text).not.toContain(REFUSED);
    expect(text).not.toContain('Recipient address');
  });
});

describe('L6. workers refuse payloads that are not encrypted', () => {
  test('a fulfilment started with a plain client records nothing and mails nobody: its workflow task fails', async () => {
    const workflowId = `planted-${randomUUID()}`;
    const email = `planted-${Date.now()}@example.com`;
    await plain.workflow.start('fulfilOrderLine', {
      workflowId,
      taskQueue: h.config.temporal.taskQueue,
      args: [{
        orgId: org.orgId, source: 'api', externalOrderId: null, productId: org.ebook.productId,
        customer: { email, name: 'Planted' }, amount: '0.00', currency: 'USD', paymentMethod: 'api',
        test: false, sendReceipt: true, emailRetryWindowMs: 60_000,
      }],
    });
    try {
      await eventually(async () => {
        const history = await plain.workflow.getHandle(workflowId).fetchHistory();
        return history.events?.find((e) => e.workflowTaskFailedEventAttributes) ? true : undefined;
      }, 15_000, 'the refused workflow task');
      const [{ customers }] = await h.orm.em.fork().execute<Array<{ customers: string }>>('select count(*) as customers from customer where email = ?', [email]);
      expect(Number(customers)).toBe(0);
      expect(h.mailbox.messages().filter((m) => m.to.includes(email))).toEqual([]);
    } finally {
      await plain.workflow.getHandle(workflowId).terminate('test over').catch(() => undefined);
    }
  });
});

describe('L7. logs carry no tokens, query-string emails or SQL values', () => {
  test('requests with tokens, secrets and emails in their URLs, and a database error, are logged without them', async () => {
    const lines: string[] = [];
    const logStream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString('utf8'));
        done();
      },
    });
    const app = await buildApiApp({
      config: { ...h.config, logLevel: 'info' }, orm: h.orm, starter: h.starter, storage: h.storage, clock: () => new Date(), logStream,
    });
    await app.ready();
    const token = randomBytes(32).toString('base64url');
    const email = 'logged-review@example.com';
    try {
      for (const url of [
        `/unsubscribe/${token}`,
        `/d/${token}`,
        `/api/customers?email=${encodeURIComponent(email)}`,
        `/my?email=${email}`,
        `/webhooks/${org.orgId}/cart-e?secret=${token}`,
      ]) {
        await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${org.apiKey}` } });
      }
      // A real database error whose statement carries a value: PostgreSQL refuses the cast.
      const error = await h.orm.em.fork().execute('select ?::uuid', [email]).catch((e: unknown) => e as Error);
      app.log.error({ err: error }, 'request failed');
    } finally {
      await app.close();
    }
    const log = lines.join('');
    expect(log).toContain('/unsubscribe/[token]');
    expect(log).toContain('database error 22P02');
    expect(log).not.toContain(token);
    expect(log).not.toMatch(EMAIL_ADDRESS);
  });

  test('a database error in an activity leaves it, for the worker\'s log and the history, without its statement\'s values', async () => {
    const workflowId = `fresh-links-review-${randomUUID()}`;
    const purchaseId = 'lookup-review@example.com';
    const handle = await h.temporal.workflow.start('freshLinks', {
      workflowId, taskQueue: h.config.temporal.taskQueue, args: [{ requestId: randomUUID(), target: { purchaseId }, emailRetryWindowMs: 60_000 }],
    });
    try {
      const lastFailure = await eventually(async () => (await handle.describe()).raw.pendingActivities?.[0]?.lastFailure ?? undefined, 15_000, 'the lookup\'s failure');
      const error = await decodeOptionalFailureToOptionalError(loadDataConverter(encryptedPayloads(h.keyRing, { acceptPlaintext: true })), lastFailure);
      expect(error?.message).toBe('database error 22P02');
      expect(`${error?.message}\n${error?.stack}`).not.toMatch(EMAIL_ADDRESS);
    } finally {
      await handle.terminate('test over').catch(() => undefined);
    }
  });
});
