/**
 * Integration health (decisions §15): owns `integration_health`, one row per organisation and
 * platform holding the last verified delivery, the last refusal with its reason, and 24 hourly
 * slots of counts. A slot is the hour's number modulo 24 and remembers which hour it counts, so a
 * slot of an hour gone by is restarted by the next mark that falls on it: the row never grows,
 * and nothing needs pruning. Marking is one upsert; the front door folds its verified marks into
 * the statement that records deliveries (`healthUpsert`).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { isoUtc, sql, statement, trustedSql, type NoRows, type Parameters, type Sql } from '../db/sql';
import { HEALTH_WINDOW_HOURS, type RefusalReason } from '../domain/integration-health';
import type { Platform } from '../domain/platforms';

/** One mark on an integration's health: a verified delivery, or a refusal with its reason. */
export interface HealthMark {
  organisation_id: string;
  platform: Platform;
  /** ISO time of the delivery. */
  at: string;
  verified: number;
  refused: number;
  reason: RefusalReason | null;
}

const SLOTS = trustedSql(String(HEALTH_WINDOW_HOURS));

/** The hour (since the epoch) a timestamptz expression falls in: the slots' unit. */
const hourOf = (at: Sql): Sql => sql`floor(extract(epoch from ${at}) / 3600)::int`;

/** An array of the slots with `value` in the slot of `hour` and 0 elsewhere. */
const oneSlot = (hour: Sql, value: Sql): Sql =>
  sql`array(select case when s = ${hour} % ${SLOTS} + 1 then ${value} else 0 end from generate_series(1, ${SLOTS}) s)`;

/**
 * `insert into integration_health …` from one JSON parameter (an array of HealthMark): stands alone
 * or ends in another statement's data-modifying CTEs, so it commits with it. Marks of one
 * integration are merged first (one statement may update a row once), counted in the hour of the
 * latest, and written in a fixed order so that two statements cannot deadlock over them. Marks
 * for an organisation that does not exist (a path's well-formed but unknown id) are dropped.
 *
 * A new row's slots all name the mark's hour (with 0 counted but in its own slot), so `excluded`
 * carries the hour in `hour_slots[1]` and the counts in its slot; a slot holding an older hour is
 * restarted, one holding a later hour (a late mark a day old) is left alone.
 */
export function healthUpsert(marks: Parameters<{ marks: string }>['marks'] | Sql): Sql {
  const hour = sql`excluded.hour_slots[1]`;
  const slot = sql`(${hour} % ${SLOTS} + 1)`;
  const counted = (column: string) => {
    const slots = trustedSql(column);
    return sql`${slots}[${slot}] = case
      when integration_health.hour_slots[${slot}] = ${hour} then integration_health.${slots}[${slot}] + excluded.${slots}[${slot}]
      when integration_health.hour_slots[${slot}] < ${hour} then excluded.${slots}[${slot}]
      else integration_health.${slots}[${slot}] end`;
  };
  return sql`insert into integration_health
    (organisation_id, platform, last_verified_at, last_refused_at, last_refusal_reason, hour_slots, verified_slots, refused_slots)
  select m.organisation_id, m.platform, m.last_verified_at, m.last_refused_at, m.reason,
    array_fill(m.hour, array[${SLOTS}]), ${oneSlot(sql`m.hour`, sql`m.verified`)}, ${oneSlot(sql`m.hour`, sql`m.refused`)}
  from (select r.organisation_id, r.platform,
      max(r.at) filter (where r.verified > 0) as last_verified_at,
      max(r.at) filter (where r.refused > 0) as last_refused_at,
      (array_agg(r.reason order by r.at desc) filter (where r.refused > 0))[1] as reason,
      ${hourOf(sql`max(r.at)`)} as hour, sum(r.verified)::int as verified, sum(r.refused)::int as refused
    from jsonb_to_recordset(${marks}::jsonb) as r(organisation_id uuid, platform text, at timestamptz, verified int, refused int, reason text)
    join organisation o on o.id = r.organisation_id
    group by r.organisation_id, r.platform
    order by r.organisation_id, r.platform) m
  on conflict (organisation_id, platform) do update set
    last_verified_at = greatest(integration_health.last_verified_at, excluded.last_verified_at),
    last_refused_at = greatest(integration_health.last_refused_at, excluded.last_refused_at),
    last_refusal_reason = case when excluded.last_refused_at >= coalesce(integration_health.last_refused_at, '-infinity')
      then excluded.last_refusal_reason else integration_health.last_refusal_reason end,
    hour_slots[${slot}] = greatest(integration_health.hour_slots[${slot}], ${hour}),
    ${counted('verified_slots')},
    ${counted('refused_slots')}`;
}

const markHealth = statement<NoRows, { marks: string }>({}, (p) => healthUpsert(p.marks));

/** Counts one refused delivery for its integration: one upsert, nothing of the body kept. */
export async function recordRefusal(
  em: EntityManager, refusal: { orgId: string; platform: Platform; reason: RefusalReason; at: Date },
): Promise<void> {
  const mark: HealthMark = {
    organisation_id: refusal.orgId, platform: refusal.platform, at: refusal.at.toISOString(), verified: 0, refused: 1, reason: refusal.reason,
  };
  await markHealth.run(em, { marks: JSON.stringify([mark]) });
}

/** Counts one verified delivery that records nothing (an ignored event): one upsert. */
export async function recordVerified(em: EntityManager, verified: { orgId: string; platform: Platform; at: Date }): Promise<void> {
  await markHealth.run(em, { marks: JSON.stringify([verifiedMark(verified.orgId, verified.platform, verified.at)]) });
}

/** The mark of a verified delivery, to fold into the statement that records it. */
export function verifiedMark(orgId: string, platform: Platform, at: Date): HealthMark {
  return { organisation_id: orgId, platform, at: at.toISOString(), verified: 1, refused: 0, reason: null };
}

/** An integration's health as stored, with its counts over the window ending at the hour of `now`. */
export interface HealthRow {
  platform: Platform;
  last_verified_at: string | null;
  last_refused_at: string | null;
  last_refusal_reason: RefusalReason | null;
  verified: number;
  refused: number;
}

const healthRead = statement<HealthRow, { orgId: string; now: Date }>(
  { platform: true, last_verified_at: true, last_refused_at: true, last_refusal_reason: true, verified: true, refused: true },
  (p) => {
    const now = hourOf(sql`${p.now}::timestamptz`);
    return sql`select h.platform, ${isoUtc('h.last_verified_at')} as last_verified_at, ${isoUtc('h.last_refused_at')} as last_refused_at,
      h.last_refusal_reason, w.verified, w.refused
    from integration_health h cross join lateral (
      select coalesce(sum(s.verified), 0)::int as verified, coalesce(sum(s.refused), 0)::int as refused
      from unnest(h.hour_slots, h.verified_slots, h.refused_slots) as s(hour, verified, refused)
      where s.hour > ${now} - ${SLOTS} and s.hour <= ${now}) w
    where h.organisation_id = ${p.orgId}`;
  },
);

/** The organisation's integrations that have had a delivery (verified or refused), with their counts. */
export function healthOf(em: EntityManager, orgId: string, now: Date): Promise<HealthRow[]> {
  return healthRead.rows(em, { orgId, now });
}
