/**
 * The webhook delivery log (decisions §5): entries and their items as the front door records them,
 * and item outcomes as fulfilment reports them, with each entry's status derived from its items.
 * Shared by the front door and the `recordItemOutcomes` activity so both decide the same way.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { NewDispatch } from '../domain/dispatch';
import type { NewEntry } from '../domain/delivery-entry';
import type { ItemOutcomeReport, OrderAlertRequest } from '../domain/fulfilment';
import type { Platform } from '../domain/platforms';
import { alertDue, deliveryStatusOf, type DeliverySource } from '../domain/statuses';
import { finishDelivery, insertDeliveries, reportItemOutcomes } from '../deliveries/delivery-store';
import { dispatchRows } from './workflow-outbox';
import type { DispatchRow } from '../outbox/outbox-store';
import type { HealthMark } from '../accounts/integration-health-store';

interface UnmatchedCount {
  organisation_id: string;
  platform: Platform;
  sku: string;
  count: number;
  last_seen_at: string;
}

/** One request's deliveries as the rows `insertDeliveries` records (built in the request's trace context). */
export interface DeliveryWrite {
  deliveries: object[];
  items: object[];
  counters: UnmatchedCount[];
  dispatches: DispatchRow[];
  /** The verified delivery's mark on its integration's health (a webhook's; none otherwise). */
  health: HealthMark[];
}

/**
 * The rows that record the entries of one delivery (several for a batch) and the workflow dispatches
 * they need (the outbox: accept = recorded, decisions §4): an entry whose items all have an outcome
 * is final at once, the others are `Pending`. `source`: how the entries came (decisions §15). Each `unmatched` item adds one to its SKU's counter
 * (the Purchases page).
 */
export function deliveryWrite(
  orgId: string, entries: NewEntry[], dispatches: NewDispatch[], now: Date, source: DeliverySource = 'webhook',
): DeliveryWrite {
  const receivedAt = now.toISOString();
  const deliveries = entries.map((entry) => {
    const outcomes = entry.items.map((i) => i.outcome);
    return {
      id: entry.id, organisation_id: orgId, kind: entry.kind, platform: entry.platform, external_order_id: entry.externalOrderId, event_id: entry.eventId, source,
      status: deliveryStatusOf(outcomes), unmatched: outcomes.includes('unmatched'), test: entry.test, workflow_ids: entry.workflowIds,
      received_at: receivedAt,
    };
  });
  const items = entries.flatMap((entry) => entry.items.map((item, lineIndex) => ({
    id: item.id, delivery_id: entry.id, line_index: lineIndex, sku: item.sku, product_id: item.productId,
    outcome: item.outcome, reason: item.reason, workflow_id: item.workflowId, held_line: item.heldLine ?? null,
  })));
  const counters = entries.flatMap((entry) => entry.items.filter((item) => item.outcome === 'unmatched').map((item) => ({
    organisation_id: orgId, platform: entry.platform, sku: item.sku ?? '', count: 1, last_seen_at: receivedAt,
  })));
  return { deliveries, items, counters, dispatches: dispatchRows(dispatches), health: [] };
}

/**
 * One counter row per SKU, in a fixed order: one statement may not update a row twice, and two
 * statements updating the same counters in the same order cannot deadlock.
 */
function mergedCounters(counters: UnmatchedCount[]): UnmatchedCount[] {
  const merged = new Map<string, UnmatchedCount>();
  for (const counter of counters) {
    const key = `${counter.organisation_id}\n${counter.platform}\n${counter.sku}`;
    const seen = merged.get(key);
    if (!seen) merged.set(key, { ...counter });
    else {
      seen.count += counter.count;
      if (counter.last_seen_at > seen.last_seen_at) seen.last_seen_at = counter.last_seen_at;
    }
  }
  return [...merged.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, counter]) => counter);
}

/**
 * Commits one or more requests' deliveries atomically. It is on the webhook's request path, so it is
 * one prepared statement (data-modifying CTEs: one round trip, one commit) rather than a
 * transaction of several, and the front door groups concurrent requests into one (StatementGroup).
 */
export async function recordDeliveries(em: EntityManager, writes: DeliveryWrite[]): Promise<void> {
  await insertDeliveries(em, {
    deliveries: writes.flatMap((w) => w.deliveries),
    items: writes.flatMap((w) => w.items),
    counters: mergedCounters(writes.flatMap((w) => w.counters)),
    dispatches: writes.flatMap((w) => w.dispatches),
    health: writes.flatMap((w) => w.health),
  });
}

/**
 * Writes item outcomes (once: a retry changes nothing) and moves each touched entry from Pending to
 * its final status when its last item is in. The entries' outcomes are read under their locks, so
 * of two runs that finish together only the second finds the entry complete; a retry of either
 * finds it so again, and moving an entry that is no longer Pending changes nothing. Returns the
 * alerts due, for every final Error entry with nothing delivered (sending them is idempotent).
 */
export async function recordItemOutcomes(em: EntityManager, items: ItemOutcomeReport[]): Promise<OrderAlertRequest[]> {
  const alerts: OrderAlertRequest[] = [];
  for (const entry of await reportItemOutcomes(em, items)) {
    const status = deliveryStatusOf(entry.outcomes);
    if (status !== 'Pending' && entry.status === 'Pending') {
      await finishDelivery(em, entry.delivery_id, status, entry.outcomes.includes('unmatched'));
    }
    if (alertDue(entry.outcomes)) {
      alerts.push({
        orgId: entry.organisation_id,
        platform: entry.platform,
        externalOrderId: entry.external_order_id,
        deliveryId: entry.delivery_id,
      });
    }
  }
  return alerts;
}
