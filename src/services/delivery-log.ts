/**
 * The webhook delivery log (decisions §5): entries and their items as the front door records them,
 * and item outcomes as fulfilment reports them, with each entry's status derived from its items.
 * Shared by the front door and the `recordItemOutcomes` activity so both decide the same way.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { NewDispatch } from '../domain/dispatch';
import type { HeldLine } from '../domain/held-line';
import type { ItemOutcomeReport, OrderAlertRequest } from '../domain/fulfilment';
import type { Platform, PurchaseSource } from '../domain/platforms';
import { alertDue, deliveryStatusOf, type DeliveryKind, type ItemOutcome } from '../domain/statuses';
import { preparedRows } from '../db/legacy-sql';
import { DISPATCH_INSERT_SQL, dispatchRows, type DispatchRow } from './workflow-outbox';

export interface NewItem {
  id: string;
  sku: string | null;
  productId: string | null;
  /** Null for a line that a workflow fulfils; its outcome is reported later. */
  outcome: ItemOutcome | null;
  reason: string | null;
  workflowId: string | null;
  /** An `unmatched` line with a SKU: what delivering it after the SKU is mapped needs. */
  heldLine?: HeldLine;
}

export interface NewEntry {
  id: string;
  kind: DeliveryKind;
  platform: Platform;
  externalOrderId: string;
  /** The platform's id of a refund or dispute event (see NormalizedRevocation), or null. */
  eventId: string | null;
  test: boolean;
  items: NewItem[];
  /** Every workflow that works for this entry (fulfilment runs, the alert run). */
  workflowIds: string[];
}

/**
 * The statement that records deliveries: entries, items, unmatched counters and outbox rows, each
 * set as one JSON parameter, so the text is fixed and PostgreSQL plans it once per connection. One
 * execution may hold several requests' deliveries (group commit), so every row names its own
 * organisation and time.
 */
const RECORD_ENTRIES_SQL = `with input as (
    select ?::jsonb as deliveries, ?::jsonb as items, ?::jsonb as counters),
  deliveries as (
    insert into webhook_delivery (id, organisation_id, kind, platform, external_order_id, event_id, status, unmatched, test, workflow_ids, received_at, completed_at)
    select d.id, d.organisation_id, d.kind, d.platform, d.external_order_id, d.event_id, d.status, d.unmatched, d.test, d.workflow_ids, d.received_at,
      case when d.status = 'Pending' then null else d.received_at end
    from input, jsonb_to_recordset(input.deliveries)
      as d(id uuid, organisation_id uuid, kind text, platform text, external_order_id text, event_id text, status text, unmatched boolean, test boolean,
        workflow_ids jsonb, received_at timestamptz)),
  items as (
    insert into webhook_delivery_item (id, delivery_id, line_index, sku, product_id, outcome, reason, workflow_id, held_line)
    select i.id, i.delivery_id, i.line_index, i.sku, i.product_id, i.outcome, i.reason, i.workflow_id, i.held_line
    from input, jsonb_to_recordset(input.items)
      as i(id uuid, delivery_id uuid, line_index int, sku text, product_id uuid, outcome text, reason text, workflow_id text, held_line jsonb)),
  counters as (
    insert into unmatched_sku (id, organisation_id, platform, sku, count, last_seen_at)
    select gen_random_uuid(), c.organisation_id, c.platform, c.sku, c.count, c.last_seen_at
    from input, jsonb_to_recordset(input.counters) as c(organisation_id uuid, platform text, sku text, count int, last_seen_at timestamptz)
    on conflict (organisation_id, platform, sku)
    do update set count = unmatched_sku.count + excluded.count, last_seen_at = greatest(unmatched_sku.last_seen_at, excluded.last_seen_at))
  ${DISPATCH_INSERT_SQL}`;

interface UnmatchedCount {
  organisation_id: string;
  platform: Platform;
  sku: string;
  count: number;
  last_seen_at: string;
}

/** One request's deliveries as the rows RECORD_ENTRIES_SQL inserts (built in the request's trace context). */
export interface DeliveryWrite {
  deliveries: object[];
  items: object[];
  counters: UnmatchedCount[];
  dispatches: DispatchRow[];
}

/**
 * The rows that record the entries of one delivery (several for a batch) and the workflow dispatches
 * they need (the outbox: accept = recorded, decisions §4): an entry whose items all have an outcome
 * is final at once, the others are `Pending`. Each `unmatched` item adds one to its SKU's counter
 * (the Purchases page).
 */
export function deliveryWrite(orgId: string, entries: NewEntry[], dispatches: NewDispatch[], now: Date): DeliveryWrite {
  const receivedAt = now.toISOString();
  const deliveries = entries.map((entry) => {
    const outcomes = entry.items.map((i) => i.outcome);
    return {
      id: entry.id, organisation_id: orgId, kind: entry.kind, platform: entry.platform, external_order_id: entry.externalOrderId, event_id: entry.eventId,
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
  return { deliveries, items, counters, dispatches: dispatchRows(dispatches) };
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
 * transaction of several, and the front door groups concurrent requests into one (GroupCommit).
 */
export async function recordDeliveries(em: EntityManager, writes: DeliveryWrite[]): Promise<void> {
  await preparedRows(em, RECORD_ENTRIES_SQL, [
    JSON.stringify(writes.flatMap((w) => w.deliveries)),
    JSON.stringify(writes.flatMap((w) => w.items)),
    JSON.stringify(mergedCounters(writes.flatMap((w) => w.counters))),
    JSON.stringify(writes.flatMap((w) => w.dispatches)),
  ]);
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
