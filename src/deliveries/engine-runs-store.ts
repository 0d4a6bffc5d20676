/**
 * Webhook fulfilment runs at work in the engine, as the outbox's claims count them: the webhook
 * items whose run was started (or joined) by the dispatcher and that have no outcome yet. SQL
 * fragments for the outbox's statements (src/outbox/outbox-store), which own no item.
 *
 * The mark is set when a dispatcher leases the item's outbox row, in the same statement, and taken
 * off again if the start fails, so a count reads only the items in the engine or on their way in (a
 * partial index), never an organisation's backlog waiting in the outbox; the mark's time also tells
 * how many runs an organisation started while its oldest sale waited (an index on it): the share of
 * the engine it was getting.
 */
import { sql, trustedSql, type Parameters, type Sql } from '../db/sql';
import { RECEIPT_RETRYING_REASON } from '../domain/fulfilment';
import { WAITING_FOR_KEY_REASON } from '../domain/license-keys';

/** Sets the mark of the items `itemIds` (a query giving their ids): their runs are being started or joined. */
export function markRunsStarted(itemIds: Sql): Sql {
  return sql`update webhook_delivery_item set run_started_at = now() where id in (${itemIds}) and run_started_at is null`;
}

/** Takes the mark off the undecided items `itemIds` (a query giving their ids): their starts failed and wait for a retry. */
export function clearRunsStarted(itemIds: Sql): Sql {
  return sql`update webhook_delivery_item set run_started_at = null where id in (${itemIds}) and outcome is null`;
}

/**
 * Reasons of the undecided items whose runs are parked: waiting for a license key to be uploaded,
 * or retrying a receipt the relay deferred. These take no task-queue place and may wait for hours
 * or days, and counted they would take the organisation's places (and the engine's): a dry pool held
 * back its sales of every other product, a deferring relay every organisation's refunds and sales.
 */
const PARKED_RUN_REASONS = trustedSql([WAITING_FOR_KEY_REASON, RECEIPT_RETRYING_REASON].map((r) => `'${r.replace(/'/g, "''")}'`).join(', '));

/**
 * The number of runs in the engine of the organisation `of` (a column of the enclosing read) or of
 * all organisations (`everyone`), less those parked (PARKED_RUN_REASONS).
 */
export function runsInEngine(of: Sql | 'everyone'): Sql {
  return sql`(select count(*) from webhook_delivery_item wi join webhook_delivery wd on wd.id = wi.delivery_id
    where wi.outcome is null and wi.run_started_at is not null and (wi.reason is null or wi.reason not in (${PARKED_RUN_REASONS}))
      and ${of === 'everyone' ? sql`true` : sql`wd.organisation_id = ${of}`})`;
}

/**
 * The number of runs the organisation `of` (a column of the enclosing read) started since `since`
 * (an expression of it), and at most `fairnessWindowMs` back.
 */
export function runsStartedSince(p: Parameters<{ fairnessWindowMs: number }>, of: Sql, since: Sql): Sql {
  return sql`(select count(*) from webhook_delivery_item wi join webhook_delivery wd on wd.id = wi.delivery_id
    where wi.run_started_at > greatest(${since}, now() - ${p.fairnessWindowMs}::int * interval '1 millisecond') and wd.organisation_id = ${of})`;
}

/**
 * The PostgreSQL channel on which the database says that a run's place in the engine is free: a
 * trigger on the item's outcome (migration 20261129150000) notifies it; temporal/engine-places listens.
 */
export const FREED_PLACE_CHANNEL = 'engine_place_freed';
