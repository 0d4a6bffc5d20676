/**
 * The unclaimed-purchase reminder (decisions §16), black box with the organisation's setting at its
 * smallest, one minute, and nothing else shortened. Every case's purchase is sold and its receipt
 * accepted first, on worker process A; then A is SIGKILLed while every reminder waits, and worker
 * process B is started only after every reminder is due: the engine keeps the waits (each run's
 * start delay), B runs what is left. Then, concurrently: one reminder with a working fresh link; none after a completed
 * transfer, for a revoked purchase, a test purchase, or a customer who turned notices off; and the
 * run whose worker was killed sent exactly one.
 *
 * @mostly-waiting the reminders' one-minute wait (alone: the cores 12 % busy; test/helpers/sequencer.js)
 */
import { WorkflowNotFoundError } from '@temporalio/common';
import { ActivityLogEntry, Customer, Purchase } from '../../src/db/entities';
import { reminderWorkflowId } from '../../src/domain/ids';
import type { ReminderOutcome } from '../../src/domain/reminder';
import { startHarness, type Harness } from '../helpers/harness';
import { workerProcesses } from '../helpers/worker-process';
import { listen } from '../helpers/download-links';
import { seedUser } from '../helpers/seed';
import { signIn } from '../helpers/dashboard';
import { edit, eventually, orderBody, seedWebhookOrg, send, withEmail, type WebhookOrg } from '../helpers/webhooks';

const REMINDER_SUBJECT = /^Your download is waiting: /;

let h: Harness;
let base: string;
let org: WebhookOrg;
const workers = workerProcesses(() => h);

/** The purchases of each case, sold in beforeAll. */
const cases = {} as Record<'sent' | 'transferred' | 'revoked' | 'unsubscribed' | 'killed', { purchaseId: string; email: string }> & {
  test: { purchaseIds: string[]; email: string };
};

beforeAll(async () => {
  h = await startHarness({ worker: false });
  base = await listen(h);
}, 300_000);
afterAll(async () => {
  workers.close();
  await h?.close();
});

const bearer = () => ({ authorization: `Bearer ${org.apiKey}` });

async function sell(email: string): Promise<string> {
  const res = await h.app.inject({
    method: 'POST', url: '/api/purchases', headers: { ...bearer(), 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({
      customerId: 'new', 'newCustomer.name': 'Rita Reminded', 'newCustomer.email': email,
      productId: org.ebook.productId, amount: '9.00', currency: 'EUR', sendEmail: 'true',
    }).toString(),
  });
  expect(res.statusCode).toBe(201);
  return /data-purchase-id="([^"]+)"/.exec(res.body)![1];
}

const purchaseRow = (purchaseId: string) => h.orm.em.fork().findOneOrFail(Purchase, purchaseId);

/** Once the receipt is accepted and the purchase's reminder run is started (it then waits). */
async function reminderWaiting(purchaseId: string): Promise<void> {
  await eventually(async () => ((await purchaseRow(purchaseId)).reminderDueAt === null ? undefined : true), 60_000, `the receipt of ${purchaseId}`);
  await eventually(async () => {
    try {
      return (await h.temporal.workflow.getHandle(reminderWorkflowId(purchaseId)).describe()).status.name === 'RUNNING' ? true : undefined;
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return undefined;
      throw error;
    }
  }, 30_000, `the reminder run of ${purchaseId}`);
}

const tokenIn = (text: string) => /https?:\/\/\S+\/d\/([A-Za-z0-9_-]+)/.exec(text)?.[1];

const remindersTo = (email: string) => h.mailbox.messages().filter((m) => m.to.includes(email) && REMINDER_SUBJECT.test(m.subject));

const reminderResult = (purchaseId: string) => h.temporal.workflow.getHandle(reminderWorkflowId(purchaseId)).result() as Promise<ReminderOutcome>;

beforeAll(async () => {
  org = await seedWebhookOrg(h, { platforms: ['storefront-a'] });
  const set = await h.app.inject({
    method: 'PUT', url: '/api/settings/organisation', headers: { ...bearer(), 'content-type': 'application/json' },
    payload: JSON.stringify({ reminderAfterMinutes: 1 }),
  });
  expect(set.json().reminderAfterMinutes).toBe(1);
  const workerA = await workers.start();

  const stamp = Date.now().toString(36);
  for (const name of ['sent', 'transferred', 'revoked', 'unsubscribed', 'killed'] as const) {
    const email = `reminder-${name}-${stamp}@example.com`;
    cases[name] = { purchaseId: await sell(email), email };
  }
  const testEmail = `reminder-test-${stamp}@example.com`;
  const testOrder = withEmail('storefront-a', edit(orderBody('storefront-a', org.orgId, `9${Date.now()}`), '"test": false', '"test": true'), testEmail);
  expect((await send(h.app, 'storefront-a', org.orgId, testOrder)).status).toBe(200);
  await Promise.all(Object.values(cases).filter((c) => 'purchaseId' in c).map((c) => reminderWaiting((c as { purchaseId: string }).purchaseId)));

  // A test purchase's receipt goes, and plans no reminder.
  const testPurchases = await eventually(async () => {
    const found = await h.orm.em.fork().find(Purchase, { customer: { email: testEmail }, receiptStatus: 'sent' });
    return found.length > 0 ? found : undefined;
  }, 60_000, 'the test purchase\'s receipt');
  cases.test = { purchaseIds: testPurchases.map((p) => p.id), email: testEmail };
  for (const p of testPurchases) expect(p.test).toBe(true);

  // A completed transfer through the receipt's link.
  const receipt = await h.mailbox.waitFor((m) => m.to.includes(cases.transferred.email), 30_000);
  const download = await fetch(`${base}/d/${tokenIn(receipt.text)}/files/${org.ebook.fileId}`);
  expect(download.status).toBe(200);
  expect(Buffer.from(await download.arrayBuffer()).equals(org.ebook.fileBytes)).toBe(true);
  await eventually(async () => ((await h.orm.em.fork().count(ActivityLogEntry, { purchase: cases.transferred.purchaseId, kind: 'file_download' })) > 0
    ? true : undefined), 10_000, 'the transfer in the ledger');
  // Its run ends on the transfer's signal, long before its minute is up.
  await h.temporal.workflow.getHandle(reminderWorkflowId(cases.transferred.purchaseId)).result();

  expect((await h.app.inject({ method: 'POST', url: `/api/purchases/${cases.revoked.purchaseId}/revoke`, headers: bearer() })).statusCode).toBe(200);

  // The buyer clicked the unsubscribe link of an update notice (what that page does).
  const { customer } = await purchaseRow(cases.unsubscribed.purchaseId);
  await h.orm.em.fork().nativeUpdate(Customer, { id: customer.id }, { updateNoticesOffAt: new Date() });

  // While it waits, the purchase page says when it is due.
  const session = await signIn(h.app, (await seedUser(h, org.orgId, 'member')).email);
  const page = await h.app.inject({ method: 'GET', url: `/purchases/${cases.sent.purchaseId}`, headers: { cookie: session.cookie } });
  expect(page.body).toMatch(/data-testid="reminder">Reminder due <time datetime="/);

  workerA.child.kill('SIGKILL');
  const lastDue = Math.max(...await Promise.all(Object.values(cases).filter((c) => 'purchaseId' in c)
    .map(async (c) => (await purchaseRow((c as { purchaseId: string }).purchaseId)).reminderDueAt!.getTime())));
  await new Promise((resolve) => setTimeout(resolve, lastDue - Date.now() + 3_000));
  await workers.start();
}, 240_000);

test.concurrent('one reminder after the wait, with a fresh link that works, on the purchase page and in the evidence', async () => {
  const { purchaseId, email } = cases.sent;
  expect(await reminderResult(purchaseId)).toBe('sent');
  const [mail, ...more] = remindersTo(email);
  expect(more).toHaveLength(0);
  expect(mail.subject).toBe('Your download is waiting: Ebook Pro');
  expect(mail.html).toContain('Download Ebook Pro');

  const token = tokenIn(mail.text)!;
  expect((await fetch(`${base}/d/${token}`)).status).toBe(200);
  const file = await fetch(`${base}/d/${token}/files/${org.ebook.fileId}`);
  expect(file.status).toBe(200);
  expect(Buffer.from(await file.arrayBuffer()).equals(org.ebook.fileBytes)).toBe(true);

  const evidence = (await h.app.inject({ method: 'GET', url: `/api/purchases/${purchaseId}/evidence`, headers: bearer() })).json();
  expect(evidence.reminder).toMatchObject({ status: 'sent', recipients: [email], subject: 'Your download is waiting: Ebook Pro' });
  // The sale's own link (in the API's answer), the receipt's, then the reminder's.
  expect(evidence.links.map((l: { via: string }) => l.via)).toEqual(['sale', 'receipt', 'reminder']);
  const session = await signIn(h.app, (await seedUser(h, org.orgId, 'member')).email);
  const page = await h.app.inject({ method: 'GET', url: `/purchases/${purchaseId}`, headers: { cookie: session.cookie } });
  expect(page.body).toMatch(/data-testid="reminder">Reminder sent <time datetime="/);
  expect(page.body).toContain('Reminder email');
}, 180_000);

test.concurrent('none when a transfer completed first: the run ends when told, without sending', async () => {
  const { purchaseId, email } = cases.transferred;
  expect(await reminderResult(purchaseId)).toBe('transferred');
  // Ended by the download's signal before its time, not by the check when due.
  const { events } = await h.temporal.workflow.getHandle(reminderWorkflowId(purchaseId)).fetchHistory();
  expect((events ?? []).some((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'transferCompleted')).toBe(true);
  expect((events ?? []).some((e) => e.timerFiredEventAttributes || e.activityTaskScheduledEventAttributes)).toBe(false);
  expect(remindersTo(email)).toHaveLength(0);
  const evidence = (await h.app.inject({ method: 'GET', url: `/api/purchases/${purchaseId}/evidence`, headers: bearer() })).json();
  expect(evidence.reminder).toBeNull();
}, 180_000);

test.concurrent('none for a revoked purchase, a test purchase, or a customer who turned notices off', async () => {
  expect(await reminderResult(cases.revoked.purchaseId)).toBe('revoked');
  expect(await reminderResult(cases.unsubscribed.purchaseId)).toBe('notices-off');
  // A test purchase's receipt planned no reminder: no run at all.
  for (const purchaseId of cases.test.purchaseIds) {
    expect((await purchaseRow(purchaseId)).reminderDueAt).toBeNull();
    await expect(h.temporal.workflow.getHandle(reminderWorkflowId(purchaseId)).describe()).rejects.toThrow(WorkflowNotFoundError);
  }
  // Every run that sends has sent by now (the other cases await theirs): nothing went to these buyers.
  await reminderResult(cases.sent.purchaseId);
  for (const email of [cases.revoked.email, cases.unsubscribed.email, cases.test.email]) expect(remindersTo(email)).toHaveLength(0);
}, 180_000);

test.concurrent('a worker SIGKILLed during the wait: the engine keeps the wait, the next worker sends it exactly once', async () => {
  const { purchaseId, email } = cases.killed;
  const handle = h.temporal.workflow.getHandle(reminderWorkflowId(purchaseId));
  expect(await handle.result()).toBe('sent');
  const { events } = await handle.fetchHistory();
  // The wait is the run's start delay, held by the engine: it was started (while worker A ran) to
  // take no workflow task before it was due, and its first task went to worker B after that.
  const started = events![0].workflowExecutionStartedEventAttributes!;
  expect(Number(started.firstWorkflowTaskBackoff?.seconds ?? 0)).toBeGreaterThanOrEqual(50);
  const dueAt = (await purchaseRow(purchaseId)).reminderDueAt!.getTime();
  const firstTask = events!.find((e) => e.workflowTaskStartedEventAttributes)!;
  expect(Number(firstTask.eventTime!.seconds) * 1000).toBeGreaterThanOrEqual(dueAt - 1000);
  const identities = (events ?? []).flatMap((e) => e.workflowTaskCompletedEventAttributes?.identity ?? []);
  expect(new Set(identities).size).toBe(1);
  expect(remindersTo(email)).toHaveLength(1);
  const sentRows = await h.orm.em.fork().execute<Array<{ n: string }>>(
    'select count(*) as n from sent_email where business_key = ? and status = ?', [`reminder:${purchaseId}`, 'sent'],
  );
  expect(Number(sentRows[0].n)).toBe(1);
}, 180_000);
