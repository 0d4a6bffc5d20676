/**
 * Fulfilment behind the front door: the delivery is acknowledged and logged Pending before any
 * fulfilment work, and concurrent duplicate deliveries join one run (decisions §5).
 */
import { readFile } from 'node:fs/promises';
import { temporal } from '@temporalio/proto';
import { Customer, Purchase, WebhookDelivery } from '../../src/db/entities';
import { PLATFORMS, type Platform } from '../../src/domain/platforms';
import { createWorker } from '../../src/temporal/worker';
import { startHarness, type Harness } from '../helpers/harness';
import { finalEntry, orderBody, SAMPLE_SKUS, seedWebhookOrg, send, settled } from '../helpers/webhooks';

describe('without a worker', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ worker: false });
  });
  afterAll(() => h?.close());

  test('every platform\'s delivery is answered and logged Pending before any fulfilment; a worker then finishes it', async () => {
    const org = await seedWebhookOrg(h);
    const em = h.orm.em.fork();
    const deliveryIds: string[] = [];
    for (const platform of PLATFORMS) {
      const res = await send(h.app, platform, org.orgId, orderBody(platform, org.orgId));
      expect([platform, res.status]).toEqual([platform, 200]);
      const entry = await em.findOneOrFail(WebhookDelivery, res.body.deliveryIds![0], { populate: ['items'] });
      expect([platform, entry.status, entry.completedAt]).toEqual([platform, 'Pending', null]);
      expect(entry.items.getItems().map((i) => i.outcome)).toEqual(SAMPLE_SKUS[platform].map(() => null));
      deliveryIds.push(entry.id);
    }
    expect(await em.count(Purchase, { organisation: org.orgId })).toBe(0);
    expect(await em.count(Customer, { organisation: org.orgId })).toBe(0);

    const { worker, connection } = await createWorker({
      deps: { orm: h.orm, mailer: h.mailer, config: h.config },
      address: process.env.TEST_TEMPORAL_ADDRESS!,
      namespace: h.config.temporal.namespace,
      taskQueue: h.config.temporal.taskQueue,
      workflowBundle: { code: await readFile(process.env.TEST_WORKFLOW_BUNDLE!, 'utf8') },
      shutdownGraceTime: '1s',
      maxCachedWorkflows: h.config.workerMaxCachedWorkflows,
      keyRing: h.keyRing,
      acceptPlaintextPayloads: false,
    });
    const running = worker.run();
    try {
      for (const id of deliveryIds) {
        const done = await finalEntry(h, id);
        expect([done.platform, done.status]).toEqual([done.platform, 'Success']);
        await settled(h, id);
      }
    } finally {
      worker.shutdown();
      await running;
      await connection.close();
    }
  });
});

describe('concurrent duplicates', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h?.close());

  test.each([['cart-e'], ['storefront-a']] as Array<[Platform]>)(
    '%s: 5 identical deliveries at once → one purchase and one receipt per product, 5 final entries',
    async (platform) => {
      const org = await seedWebhookOrg(h);
      const body = orderBody(platform, org.orgId);
      const responses = await Promise.all(Array.from({ length: 5 }, () => send(h.app, platform, org.orgId, body)));
      expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
      const entries = await Promise.all(responses.map((r) => finalEntry(h, r.body.deliveryIds![0])));
      expect(entries.map((e) => e.status)).toEqual(['Success', 'Success', 'Success', 'Success', 'Success']);

      const skus = SAMPLE_SKUS[platform];
      for (let line = 0; line < skus.length; line += 1) {
        const outcomes = entries.map((e) => e.items.getItems()[line].outcome).sort();
        expect(outcomes).toEqual(['duplicate', 'duplicate', 'duplicate', 'duplicate', 'fulfilled']);
      }
      await Promise.all(entries.map((e) => settled(h, e.id)));

      const purchases = await h.orm.em.fork().find(Purchase, { organisation: org.orgId });
      expect(purchases).toHaveLength(skus.length);
      expect(await h.orm.em.fork().count(Customer, { organisation: org.orgId })).toBe(1);
      // Every item points at the one purchase of its product.
      for (const entry of entries) {
        for (const item of entry.items.getItems()) {
          expect(purchases.map((p) => p.id)).toContain(item.purchase?.id);
        }
      }
      expect(h.mailbox.messages().filter((m) => m.text.includes(org.name))).toHaveLength(skus.length);
    },
  );

  test('a sale\'s run records it, sends the receipt and reports the item in one local activity: one workflow task, one marker', async () => {
    const org = await seedWebhookOrg(h);
    const res = await send(h.app, 'cart-e', org.orgId, orderBody('cart-e', org.orgId));
    const entry = await finalEntry(h, res.body.deliveryIds![0]);
    expect(entry.items.getItems().map((i) => i.outcome)).toEqual(SAMPLE_SKUS['cart-e'].map(() => 'fulfilled'));
    await settled(h, entry.id);
    const { events } = await h.temporal.workflow.getHandle(entry.workflowIds[0]).fetchHistory();
    const { EventType } = temporal.api.enums.v1;
    const count = (type: temporal.api.enums.v1.EventType) => events!.filter((e) => e.eventType === type).length;
    // Each local activity is a marker and an activation of the workflow's sandbox.
    expect({
      markers: count(EventType.EVENT_TYPE_MARKER_RECORDED),
      tasks: count(EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED),
      completed: count(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED),
    }).toEqual({ markers: 1, tasks: 1, completed: 1 });
  });
});
