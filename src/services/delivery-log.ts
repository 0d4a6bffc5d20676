/**
 * The webhook delivery log (decisions §5): entries and their items as the front door records them,
 * and item outcomes as fulfilment reports them, with each entry's status derived from its items.
 * Shared by the front door and the `recordItemOutcomes` activity so both decide the same way.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { WebhookDelivery, WebhookDeliveryItem } from '../db/entities';
import type { ItemOutcomeReport, OrderAlertRequest } from '../domain/fulfilment';
import type { Platform, PurchaseSource } from '../domain/platforms';
import { alertDue, deliveryStatusOf, type ItemOutcome } from '../domain/statuses';

export interface NewItem {
  sku: string | null;
  productId: string | null;
  /** Null for a line that a workflow fulfils; its outcome is reported later. */
  outcome: ItemOutcome | null;
  reason: string | null;
  workflowId: string | null;
}

export interface NewEntry {
  platform: Platform;
  externalOrderId: string;
  test: boolean;
  items: NewItem[];
  /** Every workflow that works for this entry (fulfilment runs, the alert run). */
  workflowIds: string[];
}

export interface RecordedEntry {
  deliveryId: string;
  /** Item ids in line order. */
  itemIds: string[];
}

/**
 * Records the entries of one delivery (several for a batch) in one transaction: an entry whose
 * items all have an outcome is final at once, the others are `Pending`. Each `unmatched` item
 * adds one to its SKU's counter (the Purchases page).
 */
export async function recordEntries(em: EntityManager, orgId: string, entries: NewEntry[], now: Date): Promise<RecordedEntry[]> {
  return em.transactional(async (tx) => {
    const recorded: RecordedEntry[] = [];
    for (const entry of entries) {
      const outcomes = entry.items.map((i) => i.outcome);
      const status = deliveryStatusOf(outcomes);
      const delivery = tx.create(WebhookDelivery, {
        organisation: orgId,
        platform: entry.platform,
        externalOrderId: entry.externalOrderId,
        status,
        unmatched: outcomes.includes('unmatched'),
        test: entry.test,
        workflowIds: entry.workflowIds,
        receivedAt: now,
        completedAt: status === 'Pending' ? null : now,
      });
      const items = entry.items.map((item, lineIndex) => tx.create(WebhookDeliveryItem, {
        delivery,
        lineIndex,
        sku: item.sku,
        product: item.productId,
        outcome: item.outcome,
        reason: item.reason,
        workflowId: item.workflowId,
      }));
      recorded.push({ deliveryId: delivery.id, itemIds: items.map((i) => i.id) });
    }
    await tx.flush();

    for (const entry of entries) {
      for (const item of entry.items) {
        if (item.outcome !== 'unmatched') continue;
        await tx.execute(
          `insert into unmatched_sku (id, organisation_id, platform, sku, count, last_seen_at)
           values (gen_random_uuid(), ?, ?, ?, 1, ?)
           on conflict (organisation_id, platform, sku)
           do update set count = unmatched_sku.count + 1, last_seen_at = excluded.last_seen_at`,
          [orgId, entry.platform, item.sku ?? '', now],
        );
      }
    }
    return recorded;
  });
}

/**
 * Writes item outcomes (once: a retry changes nothing) and moves each touched entry from
 * Pending to its final status when its last item is in. Entries are locked so two runs that
 * finish together cannot both decide. Returns the alerts due, for every final Error entry with
 * nothing delivered (sending them is idempotent).
 */
export async function recordItemOutcomes(em: EntityManager, items: ItemOutcomeReport[]): Promise<OrderAlertRequest[]> {
  return em.transactional(async (tx) => {
    const deliveryIds = new Set<string>();
    for (const item of items) {
      const rows = await tx.execute<Array<{ delivery_id: string }>>(
        `update webhook_delivery_item set outcome = ?, reason = ?, purchase_id = ?
         where id = ? and outcome is null returning delivery_id`,
        [item.outcome, item.reason, item.purchaseId, item.itemId],
      );
      const [found] = rows.length ? rows : await tx.execute<Array<{ delivery_id: string }>>(
        'select delivery_id from webhook_delivery_item where id = ?', [item.itemId],
      );
      if (found) deliveryIds.add(found.delivery_id);
    }
    const alerts: OrderAlertRequest[] = [];
    for (const deliveryId of [...deliveryIds].sort()) {
      const [delivery] = await tx.execute<Array<{ organisation_id: string; platform: PurchaseSource; external_order_id: string; status: string }>>(
        'select organisation_id, platform, external_order_id, status from webhook_delivery where id = ? for update',
        [deliveryId],
      );
      const outcomes = (await tx.execute<Array<{ outcome: ItemOutcome | null }>>(
        'select outcome from webhook_delivery_item where delivery_id = ?', [deliveryId],
      )).map((r) => r.outcome);
      const status = deliveryStatusOf(outcomes);
      if (status !== 'Pending' && delivery.status === 'Pending') {
        await tx.execute(
          'update webhook_delivery set status = ?, unmatched = ?, completed_at = now() where id = ?',
          [status, outcomes.includes('unmatched'), deliveryId],
        );
      }
      if (alertDue(outcomes)) {
        alerts.push({
          orgId: delivery.organisation_id,
          platform: delivery.platform,
          externalOrderId: delivery.external_order_id,
          deliveryId,
        });
      }
    }
    return alerts;
  });
}
