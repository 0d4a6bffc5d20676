/**
 * The webhook delivery log (decisions §5): entries and their items as the front door records them,
 * and item outcomes as fulfilment reports them, with each entry's status derived from its items.
 * Shared by the front door and the `recordItemOutcomes` activity so both decide the same way.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { NewDispatch } from '../domain/dispatch';
import type { ItemOutcomeReport, OrderAlertRequest } from '../domain/fulfilment';
import type { Platform, PurchaseSource } from '../domain/platforms';
import { alertDue, deliveryStatusOf, type ItemOutcome } from '../domain/statuses';
import { dispatchInsertSql } from './workflow-outbox';

export interface NewItem {
  id: string;
  sku: string | null;
  productId: string | null;
  /** Null for a line that a workflow fulfils; its outcome is reported later. */
  outcome: ItemOutcome | null;
  reason: string | null;
  workflowId: string | null;
}

export interface NewEntry {
  id: string;
  platform: Platform;
  externalOrderId: string;
  test: boolean;
  items: NewItem[];
  /** Every workflow that works for this entry (fulfilment runs, the alert run). */
  workflowIds: string[];
}

/**
 * Records the entries of one delivery (several for a batch) and the workflow dispatches they need
 * atomically (the outbox: accept = recorded, decisions §4): an entry whose items all have an outcome
 * is final at once, the others are `Pending`. Each `unmatched` item adds one to its SKU's counter
 * (the Purchases page). It is on the webhook's request path, so it is one statement
 * (data-modifying CTEs: one round trip, one commit) rather than a transaction of several.
 */
export async function recordEntries(em: EntityManager, orgId: string, entries: NewEntry[], dispatches: NewDispatch[], now: Date): Promise<void> {
  const params: unknown[] = [];
  const deliveryRows: string[] = [];
  const itemRows: string[] = [];
  const unmatched = new Map<string, { platform: Platform; sku: string; count: number }>();

  entries.forEach((entry) => {
    const outcomes = entry.items.map((i) => i.outcome);
    const status = deliveryStatusOf(outcomes);
    deliveryRows.push('(?::uuid, ?::uuid, ?, ?, ?, ?::boolean, ?::boolean, ?::jsonb, ?::timestamptz, ?::timestamptz)');
    params.push(
      entry.id, orgId, entry.platform, entry.externalOrderId, status, outcomes.includes('unmatched'),
      entry.test, JSON.stringify(entry.workflowIds), now, status === 'Pending' ? null : now,
    );
  });
  entries.forEach((entry) => {
    entry.items.forEach((item, lineIndex) => {
      itemRows.push('(?::uuid, ?::uuid, ?::int, ?, ?::uuid, ?, ?, ?)');
      params.push(item.id, entry.id, lineIndex, item.sku, item.productId, item.outcome, item.reason, item.workflowId);
      if (item.outcome === 'unmatched') {
        const sku = item.sku ?? '';
        const key = `${entry.platform}\n${sku}`;
        const counted = unmatched.get(key) ?? { platform: entry.platform, sku, count: 0 };
        counted.count += 1;
        unmatched.set(key, counted);
      }
    });
  });
  const counterRows = [...unmatched.values()].map((u) => {
    params.push(orgId, u.platform, u.sku, u.count, now);
    return '(gen_random_uuid(), ?::uuid, ?, ?, ?::int, ?::timestamptz)';
  });

  const statements = [
    `insert into webhook_delivery (id, organisation_id, platform, external_order_id, status, unmatched, test, workflow_ids, received_at, completed_at)
     values ${deliveryRows.join(', ')}`,
    ...(itemRows.length > 0 ? [
      `insert into webhook_delivery_item (id, delivery_id, line_index, sku, product_id, outcome, reason, workflow_id)
       values ${itemRows.join(', ')}`,
    ] : []),
    ...(counterRows.length > 0 ? [
      `insert into unmatched_sku (id, organisation_id, platform, sku, count, last_seen_at)
       values ${counterRows.join(', ')}
       on conflict (organisation_id, platform, sku)
       do update set count = unmatched_sku.count + excluded.count, last_seen_at = excluded.last_seen_at`,
    ] : []),
  ];
  if (dispatches.length > 0) statements.push(dispatchInsertSql(dispatches, params));
  const last = statements.pop()!;
  const sql = statements.length === 0 ? last : `with ${statements.map((st, i) => `s${i} as (${st})`).join(', ')} ${last}`;
  await em.execute(sql, params);
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
