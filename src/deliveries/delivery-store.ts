/**
 * The webhook delivery log's store (decisions §5): owns `webhook_delivery` (the log's entries),
 * `webhook_delivery_item` (their lines), `unmatched_sku` (the Purchases page counter) and
 * `signature_nonce` (signed nonces already seen). Every statement that writes them or reads
 * mainly from them is here; the held lines of map-and-replay are in held-line-store.ts.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { isoUtc, sql, statement, trustedSql, type NoRows, type Parameters, type Sql } from '../db/sql';
import { FREED_PLACE_CHANNEL } from './engine-runs-store';
import { LINE_REASONS } from '../domain/order-lines';
import type { Platform, PurchaseSource } from '../domain/platforms';
import type { DeliverySource, DeliveryStatus, ItemOutcome } from '../domain/statuses';
import type { DeliveryJson, UnmatchedSkusJson } from '../services/webhook-log';
import { dispatchInsert, type DispatchRow } from '../outbox/outbox-store';
import { healthUpsert, type HealthMark } from '../accounts/integration-health-store';

/** A statement parameter's placeholder, for fragments that take one. */
type Param = Parameters<{ value: unknown }>['value'];

// ---------------------------------------------------------------------------------------------
// Recording (the front door)
// ---------------------------------------------------------------------------------------------

/** The rows one commit records (see `deliveryWrite`), each set sent as one JSON parameter. */
export interface DeliveryRows {
  deliveries: object[];
  items: object[];
  counters: object[];
  dispatches: DispatchRow[];
  /** The verified marks of the deliveries' integrations (src/accounts/integration-health-store). */
  health: HealthMark[];
}

/**
 * The statement that records deliveries: entries, items, unmatched counters, the integrations'
 * verified counts and outbox rows, each set as one JSON parameter, so the text is fixed and
 * PostgreSQL plans it once per connection. One execution may hold several requests' deliveries
 * (group commit), so every row names its own organisation and time.
 */
const recordEntries = statement<NoRows, { deliveries: string; items: string; counters: string; health: string; dispatches: string }>({}, (p) => sql`with input as (
    select ${p.deliveries}::jsonb as deliveries, ${p.items}::jsonb as items, ${p.counters}::jsonb as counters),
  deliveries as (
    insert into webhook_delivery (id, organisation_id, kind, platform, external_order_id, event_id, source, status, unmatched, test, workflow_ids, received_at, completed_at)
    select d.id, d.organisation_id, d.kind, d.platform, d.external_order_id, d.event_id, d.source, d.status, d.unmatched, d.test, d.workflow_ids, d.received_at,
      case when d.status = 'Pending' then null else d.received_at end
    from input, jsonb_to_recordset(input.deliveries)
      as d(id uuid, organisation_id uuid, kind text, platform text, external_order_id text, event_id text, source text, status text, unmatched boolean, test boolean,
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
    do update set count = unmatched_sku.count + excluded.count, last_seen_at = greatest(unmatched_sku.last_seen_at, excluded.last_seen_at)),
  health as (${healthUpsert(p.health)})
  ${dispatchInsert(p.dispatches)}`);

const knownOrders = statement<{ external_order_id: string }, { orgId: string; platform: string; orderIds: string[]; notPaid: string }>(
  { external_order_id: true },
  (p) => sql`select d.external_order_id from webhook_delivery d
       where d.organisation_id = ${p.orgId} and d.platform = ${p.platform} and d.kind = 'order' and d.external_order_id = any(${p.orderIds}::text[])
         and not exists (select 1 from webhook_delivery_item i where i.delivery_id = d.id and i.reason = ${p.notPaid})
     union select external_order_id from purchase
       where organisation_id = ${p.orgId} and source = ${p.platform} and external_order_id = any(${p.orderIds}::text[])`,
);

/**
 * Which of these order ids the organisation already has from the platform: an order entry in the log
 * recorded once the order was paid, or a purchase (a sale recorded before the log kept it). A pulled
 * order among them changes nothing. An entry of the order before it was paid holds its lines for that
 * reason alone: the paid order is still to be fulfilled, by its paid webhook or by reconciliation.
 */
export async function knownOrderIds(em: EntityManager, orgId: string, platform: Platform, orderIds: string[]): Promise<Set<string>> {
  if (orderIds.length === 0) return new Set();
  return new Set((await knownOrders.rows(em, { orgId, platform, orderIds, notPaid: LINE_REASONS.notPaid })).map((r) => r.external_order_id));
}

/** Records entries, items, counters, verified counts and outbox rows in one statement (one round trip, one commit). */
export async function insertDeliveries(em: EntityManager, rows: DeliveryRows): Promise<void> {
  await recordEntries.run(em, {
    deliveries: JSON.stringify(rows.deliveries),
    items: JSON.stringify(rows.items),
    counters: JSON.stringify(rows.counters),
    health: JSON.stringify(rows.health),
    dispatches: JSON.stringify(rows.dispatches),
  });
}

const claimNonce = statement<{ body_sha256: Buffer }, { orgId: string; platform: string; nonceSha256: Buffer; bodySha256: Buffer; now: Date }>(
  { body_sha256: true },
  (p) => sql`insert into signature_nonce (organisation_id, platform, nonce_sha256, body_sha256, created_at)
     values (${p.orgId}, ${p.platform}, ${p.nonceSha256}, ${p.bodySha256}, ${p.now})
     on conflict (organisation_id, platform, nonce_sha256) do update set nonce_sha256 = excluded.nonce_sha256
     returning body_sha256`,
);

/**
 * Records a signed nonce's digest with its body's, or finds the one recorded first: answers the
 * body digest the nonce was first seen with. The row lock taken by the insert orders two racing.
 */
export async function firstBodyOfNonce(
  tx: EntityManager, key: { orgId: string; platform: string; nonceSha256: Buffer }, bodySha256: Buffer, now: Date,
): Promise<Buffer> {
  const row = await claimNonce.first(tx, { ...key, bodySha256, now });
  return row!.body_sha256;
}

// ---------------------------------------------------------------------------------------------
// Outcomes (fulfilment runs, revocation runs, dead letters)
// ---------------------------------------------------------------------------------------------

/** An entry whose items were just reported, as `reportItemOutcomes` read it under its lock. */
export interface ReportedEntryRow {
  delivery_id: string;
  organisation_id: string;
  platform: PurchaseSource;
  external_order_id: string;
  status: string;
  /** Every item's outcome (null for those still running). */
  outcomes: Array<ItemOutcome | null>;
}

const itemOutcomesReport = statement<ReportedEntryRow, { reports: string }>(
  { delivery_id: true, organisation_id: true, platform: true, external_order_id: true, status: true, outcomes: true },
  (p) => sql`select delivery_id, organisation_id, platform, external_order_id, status, outcomes from report_item_outcomes(${p.reports}::jsonb)`,
);

/**
 * Writes each item's outcome unless it has one (a retry changes nothing), locks the items' entries
 * and answers each with all its items' outcomes, read after the lock: of two runs that report items
 * of one entry together, the second sees the first's. One call of `report_item_outcomes` (migration
 * 20261206140000); the entries' locks end with it.
 */
export function reportItemOutcomes(
  em: EntityManager, items: ReadonlyArray<{ itemId: string; outcome: ItemOutcome; reason: string | null; purchaseId: string | null }>,
): Promise<ReportedEntryRow[]> {
  const reports = items.map((i) => ({ item_id: i.itemId, outcome: i.outcome, reason: i.reason, purchase_id: i.purchaseId }));
  return itemOutcomesReport.rows(em, { reports: JSON.stringify(reports) });
}

const itemOutcomes = statement<{ outcome: ItemOutcome | null }, { deliveryId: string }>(
  { outcome: true },
  (p) => sql`select outcome from webhook_delivery_item where delivery_id = ${p.deliveryId}`,
);

/** The outcomes of an entry's items (null for those still running). */
export async function itemOutcomesOf(tx: EntityManager, deliveryId: string): Promise<Array<ItemOutcome | null>> {
  return (await itemOutcomes.rows(tx, { deliveryId })).map((r) => r.outcome);
}

const finishDeliveryStatement = statement<NoRows, { status: DeliveryStatus; unmatched: boolean; deliveryId: string }>(
  {},
  (p) => sql`update webhook_delivery set status = ${p.status}, unmatched = ${p.unmatched}, completed_at = now()
       where id = ${p.deliveryId} and status = 'Pending'`,
);

/** A Pending entry's final status, now that its last item is in (an entry already final keeps its own). */
export async function finishDelivery(em: EntityManager, deliveryId: string, status: DeliveryStatus, unmatched: boolean): Promise<void> {
  await finishDeliveryStatement.run(em, { status, unmatched, deliveryId });
}

const openItemsOfRun = statement<{ id: string }, { deliveryId: string; workflowId: string }>(
  { id: true },
  (p) => sql`select id from webhook_delivery_item where delivery_id = ${p.deliveryId} and workflow_id = ${p.workflowId} and outcome is null`,
);

/** The items of an entry that a run (by workflow id) has not decided yet. */
export async function undecidedItemsOfRun(tx: EntityManager, deliveryId: string, workflowId: string): Promise<string[]> {
  return (await openItemsOfRun.rows(tx, { deliveryId, workflowId })).map((r) => r.id);
}

/** A refund or dispute entry being applied: when its event happened, as far as the log knows. */
export interface RevocationEntryRow {
  id: string;
  event_at: Date | string;
}

const revocationEntry = statement<RevocationEntryRow, { deliveryId: string; orgId: string }>(
  { id: true, event_at: true },
  (p) => sql`select d.id, coalesce((select min(e.received_at) from webhook_delivery e
           where e.organisation_id = d.organisation_id and e.platform = d.platform and e.event_id = d.event_id), d.received_at) as event_at
       from webhook_delivery d where d.id = ${p.deliveryId} and d.organisation_id = ${p.orgId} for update of d`,
);

/**
 * The organisation's refund or dispute entry, locked for the caller's transaction, with when its
 * event happened: the first receipt of its event id (a redelivery repeats the event), else its own.
 */
export function lockRevocationEntry(tx: EntityManager, orgId: string, deliveryId: string): Promise<RevocationEntryRow | undefined> {
  return revocationEntry.first(tx, { deliveryId, orgId });
}

/** An item a revocation run has not decided yet. */
export interface PendingItemRow {
  id: string;
  line_index: number;
  sku: string | null;
  product_id: string | null;
}

const pendingItems = statement<PendingItemRow, { deliveryId: string }>(
  { id: true, line_index: true, sku: true, product_id: true },
  (p) => sql`select id, line_index, sku, product_id from webhook_delivery_item where delivery_id = ${p.deliveryId} and outcome is null order by line_index`,
);

/** The entry's undecided items, in line order. */
export function undecidedItems(tx: EntityManager, deliveryId: string): Promise<PendingItemRow[]> {
  return pendingItems.rows(tx, { deliveryId });
}

const decideItemStatement = statement<NoRows, { outcome: ItemOutcome; reason: string | null; purchaseId: string | null; productId: string | null; itemId: string }>(
  {},
  (p) => sql`update webhook_delivery_item set outcome = ${p.outcome}, reason = ${p.reason}, purchase_id = ${p.purchaseId},
       product_id = coalesce(${p.productId}, product_id) where id = ${p.itemId}`,
);

/** A revocation's decision on one item (the purchase it found, if any, and that purchase's product). */
export async function decideItem(
  tx: EntityManager, item: { itemId: string; outcome: ItemOutcome; reason: string | null; purchaseId: string | null; productId: string | null },
): Promise<void> {
  await decideItemStatement.run(tx, item);
}

const nextLine = statement<{ next: number }, { deliveryId: string }>(
  { next: true },
  (p) => sql`select coalesce(max(line_index), -1) + 1 as next from webhook_delivery_item where delivery_id = ${p.deliveryId}`,
);

/** The line index after the entry's last item. */
export async function nextLineIndex(tx: EntityManager, deliveryId: string): Promise<number> {
  return (await nextLine.first(tx, { deliveryId }))!.next;
}

const addDecidedItemStatement = statement<
  NoRows, { deliveryId: string; lineIndex: number; productId: string; outcome: ItemOutcome; reason: string | null; purchaseId: string }
>(
  {},
  (p) => sql`insert into webhook_delivery_item (id, delivery_id, line_index, sku, product_id, outcome, reason, purchase_id, workflow_id)
     values (gen_random_uuid(), ${p.deliveryId}, ${p.lineIndex}, null, ${p.productId}, ${p.outcome}, ${p.reason}, ${p.purchaseId}, null)`,
);

/** One more item of an entry, decided at once (a further purchase of a whole-order event). */
export async function addDecidedItem(
  tx: EntityManager, item: { deliveryId: string; lineIndex: number; productId: string; outcome: ItemOutcome; reason: string | null; purchaseId: string },
): Promise<void> {
  await addDecidedItemStatement.run(tx, item);
}

const closePendingEntry = statement<NoRows, { status: DeliveryStatus; now: Date; deliveryId: string }>(
  {},
  (p) => sql`update webhook_delivery set status = ${p.status}, completed_at = coalesce(completed_at, ${p.now}) where id = ${p.deliveryId} and status = 'Pending'`,
);

/** A Pending entry's status once its items are decided (an entry already final keeps its own). */
export async function closeEntry(tx: EntityManager, deliveryId: string, status: DeliveryStatus, now: Date): Promise<void> {
  await closePendingEntry.run(tx, { status, now, deliveryId });
}

// ---------------------------------------------------------------------------------------------
// Reads: the log's pages, the evidence record, the Overview page
// ---------------------------------------------------------------------------------------------

/**
 * One page of the log with each entry's lines, in one statement: the page is cut first, so lines
 * are read for its entries only; an entry's lines come as one JSON array, in line order.
 */
const deliveryPage = (where: Sql, limit: Param) => sql`
  select d.id, d.kind, d.platform, d.external_order_id as "externalOrderId", d.source, d.status, d.unmatched, d.test,
    coalesce(i.items, '[]') as items,
    ${isoUtc('d.received_at')} as "receivedAt", ${isoUtc('d.completed_at')} as "completedAt", d.workflow_ids as "workflowIds"
  from (
    select id, kind, platform, external_order_id, source, status, unmatched, test, received_at, completed_at, workflow_ids
    from webhook_delivery where ${where} order by received_at desc, id desc limit ${limit}
  ) d
  left join lateral (
    select json_agg(json_build_object('sku', sku, 'productId', product_id, 'outcome', outcome, 'reason', reason,
      'purchaseId', purchase_id) order by line_index) as items
    from webhook_delivery_item where delivery_id = d.id
  ) i on true
  order by d.received_at desc, d.id desc`;

const DELIVERY_JSON_COLUMNS = {
  id: true, kind: true, platform: true, externalOrderId: true, source: true, status: true, unmatched: true, test: true, items: true,
  receivedAt: true, completedAt: true, workflowIds: true,
} as const;

interface PageFilter {
  orgId: string;
  status: DeliveryStatus | null;
  platform: Platform | null;
  source: DeliverySource | null;
  limit: number;
}

const pageFilter = (p: Parameters<PageFilter>) => sql`organisation_id = ${p.orgId}
  and (${p.status}::text is null or status = ${p.status}) and (${p.platform}::text is null or platform = ${p.platform})
  and (${p.source}::text is null or source = ${p.source})`;

const firstPage = statement<DeliveryJson, PageFilter>(DELIVERY_JSON_COLUMNS, (p) => deliveryPage(pageFilter(p), p.limit));

const pageAfter = statement<DeliveryJson, PageFilter & { after: string }>(
  DELIVERY_JSON_COLUMNS,
  (p) => deliveryPage(sql`${pageFilter(p)} and (received_at, id) < (select received_at, id from webhook_delivery where id = ${p.after})`, p.limit),
);

const deliveriesWithIds = statement<DeliveryJson, { orgId: string; ids: string[]; limit: number }>(
  DELIVERY_JSON_COLUMNS,
  (p) => deliveryPage(sql`organisation_id = ${p.orgId} and id = any(${p.ids}::uuid[])`, p.limit),
);

/** The organisation's log, newest first: the first page, or the one after the entry `after` (which must be the organisation's). */
export function deliveryPageRows(
  em: EntityManager, orgId: string,
  query: { status: DeliveryStatus | null; platform: Platform | null; source: DeliverySource | null; after: string | null; limit: number },
): Promise<DeliveryJson[]> {
  const filter = { orgId, status: query.status, platform: query.platform, source: query.source, limit: query.limit };
  return query.after === null ? firstPage.rows(em, filter) : pageAfter.rows(em, { ...filter, after: query.after });
}

/** These entries of the organisation's log, as the log's pages show them. */
export function deliveriesWithIdsRows(em: EntityManager, orgId: string, ids: string[]): Promise<DeliveryJson[]> {
  return deliveriesWithIds.rows(em, { orgId, ids, limit: ids.length });
}

const deliveryOfOrganisation = statement<{ found: number }, { id: string; orgId: string }>(
  { found: true },
  (p) => sql`select 1 as found from webhook_delivery where id = ${p.id} and organisation_id = ${p.orgId}`,
);

/** Whether the entry is the organisation's. */
export async function isDeliveryOf(em: EntityManager, orgId: string, id: string): Promise<boolean> {
  return (await deliveryOfOrganisation.first(em, { id, orgId })) !== undefined;
}

/** An entry of a purchase's order, as the dispute evidence record lists it. */
export interface OrderDeliveryRow {
  id: string;
  platform: string;
  kind: string;
  status: string;
  received_at: string;
  completed_at: string | null;
  items: Array<{ sku: string | null; outcome: string | null; reason: string | null }>;
}

const orderDeliveries = statement<OrderDeliveryRow, { orgId: string; platform: string; refs: string[] }>(
  { id: true, platform: true, kind: true, status: true, received_at: true, completed_at: true, items: true },
  (p) => sql`select d.id, d.platform, d.kind, d.status, ${isoUtc('d.received_at')} as received_at, ${isoUtc('d.completed_at')} as completed_at,
       coalesce((select json_agg(json_build_object('sku', i.sku, 'outcome', i.outcome, 'reason', i.reason) order by i.line_index)
                 from webhook_delivery_item i where i.delivery_id = d.id), '[]') as items
     from webhook_delivery d
     where d.organisation_id = ${p.orgId} and d.platform = ${p.platform} and d.external_order_id = any(${p.refs}::text[])
     order by d.received_at, d.id`,
);

/** The entries of an order (by its order ids or payment references), oldest first, each with its lines. */
export function orderDeliveryRows(em: EntityManager, orgId: string, platform: string, refs: string[]): Promise<OrderDeliveryRow[]> {
  return orderDeliveries.rows(em, { orgId, platform, refs });
}

const statusCounts = statement<{ status: string; n: string }, { orgId: string; since: Date }>(
  { status: true, n: true },
  (p) => sql`select status, count(*) as n from webhook_delivery where organisation_id = ${p.orgId} and received_at >= ${p.since} group by status`,
);

/** How many entries of each status the organisation received since then (counts as text). */
export function deliveryStatusCounts(em: EntityManager, orgId: string, since: Date): Promise<Array<{ status: string; n: string }>> {
  return statusCounts.rows(em, { orgId, since });
}

// ---------------------------------------------------------------------------------------------
// Unmatched SKUs (the Purchases page counter)
// ---------------------------------------------------------------------------------------------

type UnmatchedSkuRow = UnmatchedSkusJson['skus'][number];

const unmatchedSkuList = statement<UnmatchedSkuRow, { orgId: string }>(
  { platform: true, sku: true, count: true, lastSeenAt: true },
  (p) => sql`select platform, sku, count, ${isoUtc('last_seen_at')} as "lastSeenAt" from unmatched_sku
     where organisation_id = ${p.orgId} and count > 0 order by last_seen_at desc, platform, sku`,
);

/** The organisation's unmatched SKUs still counted, most recently seen first. */
export function unmatchedSkuRows(em: EntityManager, orgId: string): Promise<UnmatchedSkuRow[]> {
  return unmatchedSkuList.rows(em, { orgId });
}

const unmatchedTotal = statement<{ total: string | null }, { orgId: string }>(
  { total: true },
  (p) => sql`select sum(count) as total from unmatched_sku where organisation_id = ${p.orgId}`,
);

/** The sum of the organisation's unmatched counters. */
export async function unmatchedSkuTotal(em: EntityManager, orgId: string): Promise<number> {
  return Number((await unmatchedTotal.first(em, { orgId }))?.total ?? 0);
}

const noteWaitingItems = statement<{ notified: unknown }, { itemIds: string[]; reason: string }>(
  { notified: true }, (p) => sql`with noted as (
      update webhook_delivery_item set reason = ${p.reason} where id = any(${p.itemIds}::uuid[]) and outcome is null returning run_started_at)
    select pg_notify(${trustedSql(`'${FREED_PLACE_CHANNEL}'`)}, '') as notified from noted where run_started_at is not null limit 1`,
);

/**
 * Items still undecided that wait for something (a license key, a deferred receipt): the log shows
 * why its entry is Pending. Their runs are parked (PARKED_RUN_REASONS): the places they held in the
 * engine are free, and the dispatchers hear so at the commit.
 */
export async function noteItemsWaiting(em: EntityManager, itemIds: string[], reason: string): Promise<void> {
  if (itemIds.length > 0) await noteWaitingItems.run(em, { itemIds, reason });
}
