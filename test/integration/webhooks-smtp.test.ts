/**
 * Receipts the mail server refuses (decisions §5): a permanent 5xx fails the item at once, a
 * temporary 4xx is retried for EMAIL_RETRY_WINDOW; a receipt that was never sent is re-sent by the
 * next delivery of the order, creating nothing else.
 *
 * @mostly-waiting the receipts' retry window (alone: the cores 21 % busy)
 */
import { Customer, Purchase, SentEmail } from '../../src/db/entities';
import { startHarness, type Harness } from '../helpers/harness';
import {
  eventually,
  finalEntry,
  orderBody,
  seedWebhookOrg,
  send,
  settled,
  withEmail,
  withOrderId,
  type WebhookOrg,
} from '../helpers/webhooks';

const cartE = (org: WebhookOrg, email: string, saleId: string) =>
  withOrderId('cart-e', withEmail('cart-e', orderBody('cart-e', org.orgId), email), saleId);

describe('with the default retry window', () => {
  let h: Harness;
  let org: WebhookOrg & { name: string };
  beforeAll(async () => {
    h = await startHarness({ mailbox: { reject: { match: (a) => a === 'x@example.com', code: 550 } } });
    org = await seedWebhookOrg(h);
  });
  afterAll(() => h?.close());

  test('a 550 fails the receipt at once (item error, entry Error, alert); a redelivery re-sends it and creates nothing else', async () => {
    const body = cartE(org, 'x@example.com', 'sale-550');
    const first = await send(h.app, 'cart-e', org.orgId, body);
    expect(first.status).toBe(200);
    const failed = await finalEntry(h, first.body.deliveryIds![0]);
    expect(failed.status).toBe('Error');
    const [item] = failed.items.getItems();
    expect(item.outcome).toBe('error');
    expect(item.reason).toMatch(/^receipt email failed: .*550/);
    expect(h.mailbox.rejections().filter((r) => r.address === 'x@example.com')).toHaveLength(1);
    const alert = await h.mailbox.waitFor((m) => m.subject === 'Order sale-550 from cart-e could not be fulfilled', 20_000);
    expect(alert.text).toContain('SKU ebook-pro: receipt email failed');
    await settled(h, failed.id);

    const em = h.orm.em.fork();
    const purchase = await em.findOneOrFail(Purchase, { organisation: org.orgId, externalOrderId: 'sale-550' });
    expect(purchase.receiptStatus).toBe('failed');
    expect(item.purchase?.id).toBe(purchase.id);

    // Redelivered while the relay still refuses: the re-send fails again, and no second alert.
    const refusedAgain = await send(h.app, 'cart-e', org.orgId, body);
    const stillFailed = await finalEntry(h, refusedAgain.body.deliveryIds![0]);
    expect(stillFailed.items.getItems().map((i) => [i.outcome, i.purchase?.id])).toEqual([['error', purchase.id]]);
    await settled(h, stillFailed.id);
    expect(h.mailbox.rejections().filter((r) => r.address === 'x@example.com')).toHaveLength(2);
    expect(h.mailbox.messages().filter((m) => m.subject.includes('sale-550'))).toHaveLength(1);

    h.mailbox.setReject(undefined);
    const again = await send(h.app, 'cart-e', org.orgId, body);
    const resent = await finalEntry(h, again.body.deliveryIds![0]);
    expect(resent.status).toBe('Success');
    expect(resent.items.getItems().map((i) => [i.outcome, i.purchase?.id])).toEqual([['fulfilled', purchase.id]]);
    const receipt = await h.mailbox.waitFor((m) => m.to.includes('x@example.com'), 20_000);
    expect(receipt.text).toMatch(/http:\/\/delivery\.test\/d\//);
    await settled(h, resent.id);

    const after = h.orm.em.fork();
    expect(await after.count(Purchase, { organisation: org.orgId, externalOrderId: 'sale-550' })).toBe(1);
    expect(await after.count(Customer, { organisation: org.orgId, email: 'x@example.com' })).toBe(1);
    expect((await after.findOneOrFail(Purchase, purchase.id)).receiptStatus).toBe('sent');
    // The alert went out once; the successful redelivery owes none.
    expect(h.mailbox.messages().filter((m) => m.subject.includes('sale-550'))).toHaveLength(1);

    // A third delivery now finds the receipt sent: a duplicate, no further email.
    const third = await send(h.app, 'cart-e', org.orgId, body);
    expect((await finalEntry(h, third.body.deliveryIds![0])).items.getItems().map((i) => i.outcome)).toEqual(['duplicate']);
    await settled(h, third.body.deliveryIds![0]);
    expect(h.mailbox.messages().filter((m) => m.to.includes('x@example.com'))).toHaveLength(1);
  });

  test('a 451 that clears within the window is retried and delivered; a delivery arriving meanwhile joins it as a duplicate', async () => {
    h.mailbox.setReject({ match: (a) => a === 'z@example.com', code: 451 });
    const body = cartE(org, 'z@example.com', 'sale-451-clears');
    const first = await send(h.app, 'cart-e', org.orgId, body);
    await eventually(async () => (h.mailbox.rejections().some((r) => r.address === 'z@example.com') ? true : undefined), 20_000, 'a 451');
    // The run is still retrying the receipt: this delivery joins it.
    const meanwhile = await send(h.app, 'cart-e', org.orgId, body);
    expect(meanwhile.status).toBe(200);
    h.mailbox.setReject(undefined);

    const entry = await finalEntry(h, first.body.deliveryIds![0]);
    expect(entry.status).toBe('Success');
    expect(entry.items.getItems().map((i) => i.outcome)).toEqual(['fulfilled']);
    const joined = await finalEntry(h, meanwhile.body.deliveryIds![0]);
    expect(joined.status).toBe('Success');
    expect(joined.items.getItems().map((i) => [i.outcome, i.purchase?.id])).toEqual([['duplicate', entry.items[0].purchase?.id]]);
    expect(joined.workflowIds).toEqual(entry.workflowIds);
    await settled(h, entry.id);

    expect(h.mailbox.messages().filter((m) => m.to.includes('z@example.com'))).toHaveLength(1);
    const sends = (await h.orm.em.fork().find(SentEmail, { kind: 'receipt' })).filter((s) => s.recipients.includes('z@example.com'));
    expect(sends.map((s) => s.status)).toEqual(['sent']);
    expect(await h.orm.em.fork().count(Purchase, { organisation: org.orgId, externalOrderId: 'sale-451-clears' })).toBe(1);
  });

  test('the re-send race (decisions §5, amended): a redelivery sent the moment the entry turns Error, while the failed run still sends its alert, re-sends the receipt once', async () => {
    // The receipt is refused for good; the alert to the staff is deferred (451), so the failed run
    // is still open, retrying its alert, when the redelivery arrives.
    h.mailbox.setReject([
      { match: (a) => a === 'race@example.com', code: 550 },
      { match: (a) => a.startsWith('owner-'), code: 451 },
    ]);
    const body = cartE(org, 'race@example.com', 'sale-race');
    const first = await send(h.app, 'cart-e', org.orgId, body);
    const failed = await eventually(async () => {
      const entry = await finalEntry(h, first.body.deliveryIds![0]);
      return entry.status === 'Error' ? entry : undefined;
    }, 30_000, 'the entry to turn Error');
    h.mailbox.setReject({ match: (a) => a.startsWith('owner-'), code: 451 });
    const redelivery = await send(h.app, 'cart-e', org.orgId, body);
    expect(redelivery.status).toBe(200);

    const resent = await finalEntry(h, redelivery.body.deliveryIds![0]);
    expect(resent.items.getItems().map((i) => [i.outcome, i.purchase?.id])).toEqual([['fulfilled', failed.items[0].purchase?.id]]);
    expect(resent.status).toBe('Success');
    // It joined the failed run (still open): the same workflow, one run.
    expect(resent.workflowIds).toEqual(failed.workflowIds);
    const runs = [];
    for await (const run of h.temporal.workflow.list({ query: `WorkflowId = "${failed.workflowIds[0]}"` })) runs.push(run.runId);
    expect(runs).toHaveLength(1);

    h.mailbox.setReject(undefined);
    await h.mailbox.waitFor((m) => m.subject === 'Order sale-race from cart-e could not be fulfilled', 30_000);
    await settled(h, failed.id);
    expect(h.mailbox.messages().filter((m) => m.to.includes('race@example.com'))).toHaveLength(1);
    expect(h.mailbox.rejections().filter((r) => r.address === 'race@example.com')).toHaveLength(1);
    const purchase = await h.orm.em.fork().findOneOrFail(Purchase, { organisation: org.orgId, externalOrderId: 'sale-race' });
    expect(purchase.receiptStatus).toBe('sent');
    expect((await finalEntry(h, failed.id)).items.getItems().map((i) => i.outcome)).toEqual(['error']);
  });
});

describe('with EMAIL_RETRY_WINDOW=5s', () => {
  let h: Harness;
  let org: WebhookOrg;
  beforeAll(async () => {
    h = await startHarness({ env: { EMAIL_RETRY_WINDOW: '5s' }, mailbox: { reject: { match: (a) => a === 'y@example.com', code: 451 } } });
    org = await seedWebhookOrg(h);
  });
  afterAll(() => h?.close());

  test('a 451 that lasts past the window is retried, then fails the receipt', async () => {
    const res = await send(h.app, 'cart-e', org.orgId, cartE(org, 'y@example.com', 'sale-451'));
    const entry = await finalEntry(h, res.body.deliveryIds![0], 40_000);
    expect(entry.status).toBe('Error');
    expect(entry.items.getItems().map((i) => i.outcome)).toEqual(['error']);
    expect(entry.items[0].reason).toBe('receipt email could not be sent within the retry window');
    expect(h.mailbox.rejections().filter((r) => r.address === 'y@example.com').length).toBeGreaterThanOrEqual(2);
    const purchase = await h.orm.em.fork().findOneOrFail(Purchase, { organisation: org.orgId, externalOrderId: 'sale-451' });
    expect(purchase.receiptStatus).toBe('failed');
    await h.mailbox.waitFor((m) => m.subject === 'Order sale-451 from cart-e could not be fulfilled', 20_000);
  });
});

describe('with a relay that holds a receipt without answering', () => {
  let h: Harness;
  let org: WebhookOrg;
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let held = 0;
  beforeAll(async () => {
    h = await startHarness({
      mailbox: {
        // The first message to slow@ gets no answer until the test releases it.
        beforeAccept: async (mail) => {
          if (!mail.to.includes('slow@example.com') || held++ > 0) return;
          await released;
        },
      },
    });
    org = await seedWebhookOrg(h);
  });
  afterAll(async () => {
    release();
    await h?.close();
  });

  test('the receipt\'s first attempt gives up after 20 s and the receipt goes as a normal activity, under the same Message-ID', async () => {
    const res = await send(h.app, 'cart-e', org.orgId, cartE(org, 'slow@example.com', 'sale-held'));
    const entry = await finalEntry(h, res.body.deliveryIds![0], 60_000);
    expect(entry.items.getItems().map((i) => i.outcome)).toEqual(['fulfilled']);
    const { events } = await h.temporal.workflow.getHandle(entry.workflowIds[0]).fetchHistory();
    expect(events!.filter((e) => e.activityTaskScheduledEventAttributes).map((e) => e.activityTaskScheduledEventAttributes!.activityType!.name))
      .toEqual(['sendReceipt']);
    release();
    await eventually(async () => (h.mailbox.messages().filter((m) => m.to.includes('slow@example.com')).length === 2 ? true : undefined), 20_000, 'the held message');
    // The held first attempt and the activity's send are one message to mail systems.
    expect(new Set(h.mailbox.messages().filter((m) => m.to.includes('slow@example.com')).map((m) => m.messageId)).size).toBe(1);
    await settled(h, entry.id);
  }, 90_000);
});
