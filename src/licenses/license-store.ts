/**
 * License keys as stored (decisions §14): the keys of each product (generated with their purchase,
 * or uploaded to its pool and issued later) and their issue. Owns the table `license_key` (the pool's
 * warning marks are the product's: src/catalogue/catalogue-store).
 *
 * A pool key goes to one purchase only: it is taken `for update skip locked`, by the statement that
 * records the purchase and under the product's pool lock (`poolLock`) otherwise: an upload holds it
 * exclusively while it adds keys and hands them to the waiting purchases, a waiting purchase's claim
 * holds it shared, so a purchase that found the pool empty just before an upload is either seen by
 * that upload or sees its keys.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql, statement, trustedSql, type Sql } from '../db/sql';
import { rearmPoolAlerts } from '../catalogue/catalogue-store';
import { LOW_POOL_THRESHOLD, type ClaimState } from '../domain/license-keys';
import type { PurchaseSource } from '../domain/platforms';

/**
 * CTEs for the statement that records purchases (src/purchases/purchase-store), after its
 * `new_line` (each purchase it created: id, org_id, product_id, license_source, generated_key, ord):
 * a generated key for each new purchase of a generated-key product, and for those of a pool product
 * the pool's oldest free keys, one each in the order of the lines (a pool with fewer free keys
 * leaves the last ones waiting). Each returns the purchase it issued to; neither runs for a
 * purchase that already existed.
 */
export const issueKeysWithPurchases = sql`generated_key as (
       insert into license_key (id, organisation_id, product_id, key, purchase_id, issued_at, created_at)
       select gen_random_uuid(), n.org_id, n.product_id, n.generated_key, n.id, now(), now()
       from new_line n where n.license_source = 'generated'
       returning purchase_id),
     pool_want as (
       select n.id, n.product_id, row_number() over (partition by n.product_id order by n.ord) as place
       from new_line n where n.license_source = 'pool'),
     free_key as (
       select w.product_id, f.id, row_number() over (partition by w.product_id order by f.created_at, f.id) as place
       from (select product_id, count(*) as wanted from pool_want group by product_id) w
       cross join lateral (
         select k.id, k.created_at from license_key k where k.product_id = w.product_id and k.purchase_id is null
         order by k.created_at, k.id limit w.wanted for update skip locked) f),
     pooled_key as (
       update license_key k set purchase_id = w.id, issued_at = now()
       from free_key f join pool_want w on w.product_id = f.product_id and w.place = f.place
       where k.id = f.id returning k.purchase_id)`;

/** The purchases `alias` that want a key and have none yet: waiting for one. */
const waitingForKey = (alias: string): Sql => trustedSql(`${alias}.license_wanted and not exists (select 1 from license_key k where k.purchase_id = ${alias}.id)`);

/**
 * Whether the purchase `r` (of `purchase_row`, with `license_wanted`) still waits for a key, given
 * the CTEs above: their own writes are invisible to the rest of the statement.
 */
export const waitsForKey = sql`(${waitingForKey('r')}
       and not exists (select 1 from generated_key g where g.purchase_id = r.id)
       and not exists (select 1 from pooled_key q where q.purchase_id = r.id))`;

/** The key issued to the purchase `p` (a subquery: one key per purchase at most), null while it has none. */
export const KEY_OF_PURCHASE = sql`(select k.key from license_key k where k.purchase_id = p.id)`;

const keysOfPurchasesRead = statement<{ purchase_id: string; key: string }, { purchaseIds: string[] }>(
  { purchase_id: true, key: true },
  (p) => sql`select purchase_id, key from license_key where purchase_id = any(${p.purchaseIds}::uuid[])`,
);

/** The keys issued to these purchases, by purchase id (a purchase without one is absent). */
export async function keysOfPurchases(em: EntityManager, purchaseIds: string[]): Promise<Map<string, string>> {
  if (purchaseIds.length === 0) return new Map();
  return new Map((await keysOfPurchasesRead.rows(em, { purchaseIds })).map((r) => [r.purchase_id, r.key]));
}

const poolLockShared = statement<{ locked: unknown }, { productId: string }>(
  { locked: true }, (p) => sql`select pg_advisory_xact_lock_shared(hashtextextended('license-pool:' || ${p.productId}::text, 0)) as locked`,
);
const poolLockExclusive = statement<{ locked: unknown }, { productId: string }>(
  { locked: true }, (p) => sql`select pg_advisory_xact_lock(hashtextextended('license-pool:' || ${p.productId}::text, 0)) as locked`,
);

const claimStatement = statement<{ state: ClaimState }, { purchaseId: string }>(
  { state: true },
  (p) => sql`with purchase_row as (
       select pu.id, pu.product_id, pu.license_wanted, pu.revoked_at is not null as revoked,
         exists (select 1 from license_key k where k.purchase_id = pu.id) as has_key
       from purchase pu where pu.id = ${p.purchaseId}),
     free_key as (
       select k.id from license_key k join purchase_row r on k.product_id = r.product_id
       where k.purchase_id is null and r.license_wanted and not r.has_key and not r.revoked
       order by k.created_at, k.id limit 1 for update of k skip locked),
     claimed as (
       update license_key k set purchase_id = ${p.purchaseId}, issued_at = now() from free_key f where k.id = f.id returning k.id)
     select case when not r.license_wanted then 'none'
                 when r.has_key or exists (select 1 from claimed) then 'issued'
                 when r.revoked then 'withdrawn'
                 else 'waiting' end as state
     from purchase_row r`,
);

/**
 * A purchase of `productId` that found its pool empty: takes the oldest free key now if one came
 * since (under the pool's shared lock, after any upload that was under way). `none`: it needs no key
 * or does not exist; `withdrawn`: revoked while waiting.
 */
export async function claimPoolKey(em: EntityManager, purchaseId: string, productId: string): Promise<ClaimState> {
  return em.transactional(async (tx) => {
    await poolLockShared.run(tx, { productId });
    return (await claimStatement.first(tx, { purchaseId }))?.state ?? 'none';
  });
}

export interface ReleasedPurchase {
  purchase_id: string;
  organisation_id: string;
  product_id: string;
  source: PurchaseSource;
  external_order_id: string | null;
}

const addKeys = statement<{ added: number }, { orgId: string; productId: string; keys: string[] }>(
  { added: true },
  (p) => sql`with added as (
       insert into license_key (id, organisation_id, product_id, key, purchase_id, issued_at, created_at)
       select gen_random_uuid(), ${p.orgId}::uuid, ${p.productId}::uuid, k.key, null, null, clock_timestamp()
       from unnest(${p.keys}::text[]) with ordinality as k(key, n) order by k.n
       on conflict (key) do nothing returning 1)
     select count(*)::int as added from added`,
);

/**
 * The pool's free keys go to the purchases waiting for one, oldest purchase first, oldest key first.
 * A free key that a sale being recorded has just taken (locked, not yet committed) is skipped: the
 * sale keeps it, and this upload's purchases get the next ones.
 */
const releaseToWaiting = statement<ReleasedPurchase, { orgId: string; productId: string }>(
  { purchase_id: true, organisation_id: true, product_id: true, source: true, external_order_id: true },
  (p) => sql`with waiting as (
       select pu.id, pu.organisation_id, pu.product_id, pu.source, pu.external_order_id,
         row_number() over (order by pu.created_at, pu.id) as n
       from purchase pu
       where pu.organisation_id = ${p.orgId} and pu.product_id = ${p.productId} and pu.revoked_at is null and ${waitingForKey('pu')}),
     free as (
       select id, row_number() over (order by created_at, id) as n
       from (select id, created_at from license_key where product_id = ${p.productId} and purchase_id is null
             order by created_at, id limit (select count(*) from waiting) for update skip locked) k),
     issued as (
       update license_key k set purchase_id = w.id, issued_at = now()
       from free f join waiting w on w.n = f.n where k.id = f.id returning w.id)
     select w.id as purchase_id, w.organisation_id, w.product_id, w.source, w.external_order_id
     from waiting w join issued i on i.id = w.id order by w.n`,
);

const waitingForKeyCount = statement<{ waiting: number }, { productId: string }>(
  { waiting: true },
  (p) => sql`select count(*)::int as waiting from purchase pu where pu.product_id = ${p.productId} and pu.revoked_at is null and ${waitingForKey('pu')}`,
);

/** How many of the product's purchases (not revoked) wait for a key from its pool. */
export async function purchasesWaitingForKey(em: EntityManager, productId: string): Promise<number> {
  return (await waitingForKeyCount.first(em, { productId }))?.waiting ?? 0;
}

const waitingPurchaseRead = statement<ReleasedPurchase, { purchaseId: string }>(
  { purchase_id: true, organisation_id: true, product_id: true, source: true, external_order_id: true },
  (p) => sql`select pu.id as purchase_id, pu.organisation_id, pu.product_id, pu.source, pu.external_order_id from purchase pu
     where pu.id = ${p.purchaseId} and ${waitingForKey('pu')}`,
);

/** The purchase, when it waits for a pool key (its run is parked until woken). */
export function waitingPurchase(em: EntityManager, purchaseId: string): Promise<ReleasedPurchase | undefined> {
  return waitingPurchaseRead.first(em, { purchaseId });
}

/**
 * Adds uploaded keys to a product's pool and hands the free ones to the purchases waiting for a
 * key, in purchase order, in the caller's transaction. A key already held (by any product) or
 * repeated in the upload is a duplicate. Answers how many were added and the purchases released.
 */
export async function addPoolKeys(
  tx: EntityManager, orgId: string, productId: string, keys: string[],
): Promise<{ added: number; released: ReleasedPurchase[] }> {
  await poolLockExclusive.run(tx, { productId });
  const row = await addKeys.first(tx, { orgId, productId, keys });
  const released = await releaseToWaiting.rows(tx, { orgId, productId });
  const added = row?.added ?? 0;
  await rearmPoolAlerts(tx, productId, LOW_POOL_THRESHOLD, added);
  return { added, released };
}

const poolCounts = statement<{ available: number; issued: number }, { productId: string }>(
  { available: true, issued: true },
  (p) => sql`select (count(*) filter (where purchase_id is null))::int as available, (count(*) filter (where purchase_id is not null))::int as issued
     from license_key where product_id = ${p.productId}`,
);

/** A product's keys: free in its pool, and issued to purchases. */
export async function licenseKeyCounts(em: EntityManager, productId: string): Promise<{ available: number; issued: number }> {
  return (await poolCounts.first(em, { productId })) ?? { available: 0, issued: 0 };
}

