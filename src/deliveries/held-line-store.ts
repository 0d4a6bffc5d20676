/**
 * Held lines of the webhook delivery log (decisions §12): the `unmatched` items of
 * `webhook_delivery_item` that kept their order (`held_line`), read and claimed for map-and-replay,
 * with their entries in `webhook_delivery` and the counters of `unmatched_sku` they leave. Those
 * tables are owned by this slice (see delivery-store.ts for the rest of their statements).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { isoUtc, sql, statement, type NoRows, type Parameters } from '../db/sql';
import type { HeldLine } from '../domain/held-line';
import type { Platform } from '../domain/platforms';

interface HeldKey {
  orgId: string;
  /** The SKU normalised (`normaliseSku`). */
  sku: string;
}

/** The organisation's `unmatched` lines of a SKU (item `i` of entry `d`). */
const heldWhere = (p: Parameters<HeldKey>) => sql`i.outcome = 'unmatched' and d.organisation_id = ${p.orgId} and lower(btrim(i.sku)) = ${p.sku}`;

/** A held line as the map-and-replay page lists it. */
export interface HeldSaleRow {
  item_id: string;
  delivery_id: string;
  platform: string;
  external_order_id: string;
  sku: string;
  received_at: string;
  held_line: HeldLine | null;
}

const heldSales = statement<HeldSaleRow, HeldKey>(
  { item_id: true, delivery_id: true, platform: true, external_order_id: true, sku: true, received_at: true, held_line: true },
  (p) => sql`select i.id as item_id, d.id as delivery_id, d.platform, d.external_order_id, i.sku, ${isoUtc('d.received_at')} as received_at, i.held_line
     from webhook_delivery_item i join webhook_delivery d on d.id = i.delivery_id
     where ${heldWhere(p)} order by d.received_at, i.line_index`,
);

/** The sales a SKU held back, oldest first. */
export function heldSaleRows(em: EntityManager, orgId: string, sku: string): Promise<HeldSaleRow[]> {
  return heldSales.rows(em, { orgId, sku });
}

/** A held line that kept its order, claimed for delivery. */
export interface ClaimedLineRow {
  id: string;
  delivery_id: string;
  platform: Platform;
  external_order_id: string;
  sku: string;
  held_line: HeldLine;
}

const claimHeld = statement<ClaimedLineRow, HeldKey>(
  { id: true, delivery_id: true, platform: true, external_order_id: true, sku: true, held_line: true },
  (p) => sql`select i.id, i.delivery_id, d.platform, d.external_order_id, i.sku, i.held_line
       from webhook_delivery_item i join webhook_delivery d on d.id = i.delivery_id
       where ${heldWhere(p)} and i.held_line is not null
       order by d.received_at, i.line_index for update of i`,
);

/** The SKU's held lines that kept their order, oldest first, locked for the caller's transaction. */
export function claimHeldLines(tx: EntityManager, orgId: string, sku: string): Promise<ClaimedLineRow[]> {
  return claimHeld.rows(tx, { orgId, sku });
}

const heldWithoutLine = statement<{ count: string }, HeldKey>(
  { count: true },
  (p) => sql`select count(*) from webhook_delivery_item i join webhook_delivery d on d.id = i.delivery_id where ${heldWhere(p)} and i.held_line is null`,
);

/** How many of the SKU's held lines kept no order (recorded before replay existed). */
export async function heldWithoutOrderCount(tx: EntityManager, orgId: string, sku: string): Promise<number> {
  return Number((await heldWithoutLine.first(tx, { orgId, sku }))!.count);
}

/** A claimed line, back in progress: its entry and its run's workflow id. */
export interface ReplayedItem {
  id: string;
  delivery_id: string;
  workflow_id: string;
}

const reopenItems = statement<NoRows, { productId: string; items: string }>(
  {},
  (p) => sql`update webhook_delivery_item i set outcome = null, reason = null, product_id = ${p.productId}, workflow_id = c.workflow_id
         from jsonb_to_recordset(${p.items}::jsonb) as c(id uuid, workflow_id text) where i.id = c.id`,
);

/** The entries wait for their runs again; each run's workflow id joins the entry's list. */
const reopenEntries = statement<NoRows, { items: string }>(
  {},
  (p) => sql`update webhook_delivery d set status = 'Pending', completed_at = null,
           workflow_ids = (select coalesce(jsonb_agg(distinct w), '[]') from (
             select jsonb_array_elements_text(d.workflow_ids::jsonb) as w
             union select c.workflow_id from jsonb_to_recordset(${p.items}::jsonb) as c(delivery_id uuid, workflow_id text) where c.delivery_id = d.id) ids)
         where d.id in (select (e->>'delivery_id')::uuid from jsonb_array_elements(${p.items}::jsonb) e)`,
);

/** The Purchases page counter counts the lines still held. */
const uncount = statement<NoRows, { items: string; orgId: string }>(
  {},
  (p) => sql`update unmatched_sku u set count = greatest(0, u.count - c.n)
         from (select d.platform, i.sku, count(*)::int as n from jsonb_to_recordset(${p.items}::jsonb) as x(id uuid)
               join webhook_delivery_item i on i.id = x.id join webhook_delivery d on d.id = i.delivery_id group by 1, 2) c
         where u.organisation_id = ${p.orgId} and u.platform = c.platform and u.sku = c.sku`,
);

/**
 * Claimed lines move from `unmatched` back to in progress for `productId`'s runs, their entries to
 * `Pending`, and their SKU's counter down by as many.
 */
export async function replayHeldLines(tx: EntityManager, orgId: string, productId: string, items: ReplayedItem[]): Promise<void> {
  const json = JSON.stringify(items);
  await reopenItems.run(tx, { productId, items: json });
  await reopenEntries.run(tx, { items: json });
  await uncount.run(tx, { items: json, orgId });
}

const skuSeen = statement<{ seen: boolean }, HeldKey>(
  { seen: true },
  (p) => sql`select exists (select 1 from unmatched_sku where organisation_id = ${p.orgId} and lower(btrim(sku)) = ${p.sku})
       or exists (select 1 from webhook_delivery_item i join webhook_delivery d on d.id = i.delivery_id where ${heldWhere(p)}) as seen`,
);

/** Whether anyone sent the SKU: a counter row or a held line. */
export async function isSkuSeen(em: EntityManager, orgId: string, sku: string): Promise<boolean> {
  return (await skuSeen.first(em, { orgId, sku }))!.seen;
}
