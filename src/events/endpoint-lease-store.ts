import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql, statement, type NoRows } from '../db/sql';
import { ATTEMPT_TIMEOUT_MS } from '../domain/outbound-events';

/**
 * The SQL of outbound_endpoint_lease: an endpoint's request slots shared by every worker process
 * (decisions §13: at most `perEndpoint` requests in flight to one endpoint). A lease outlives the
 * attempt's own timeout by as much again, so a worker that dies holding one frees it by then.
 */

const LEASE_MS = 2 * ATTEMPT_TIMEOUT_MS;

/**
 * Takers of one endpoint's slots queue on a transaction-scoped lock, so each sees the slots the one
 * before it took: without it, two at once would pick the same free slot and the second go busy
 * with others still free.
 */
const lockEndpointSlots = statement<{ locked: string }, { endpointId: string }>(
  { locked: true },
  (p) => sql`select pg_advisory_xact_lock(hashtextextended('outbound_endpoint_lease:' || ${p.endpointId}::text, 0))::text as locked`,
);

/** Takes a free slot (none held, or its lease run out); none when all are held. */
const takeSlot = statement<{ slot: number }, { endpointId: string; perEndpoint: number; holder: string; leaseMs: number }>(
  { slot: true },
  (p) => sql`with free as (
      select s from generate_series(0, ${p.perEndpoint}::int - 1) s
      where not exists (select 1 from outbound_endpoint_lease l
                        where l.endpoint_id = ${p.endpointId}::uuid and l.slot = s and l.until > now())
      order by s limit 1)
    insert into outbound_endpoint_lease (endpoint_id, slot, holder, until)
    select ${p.endpointId}::uuid, s, ${p.holder}::uuid, now() + ${p.leaseMs}::int * interval '1 millisecond' from free
    on conflict (endpoint_id, slot) do update set holder = excluded.holder, until = excluded.until
      where outbound_endpoint_lease.until <= now()
    returning slot`,
);

const freeSlot = statement<NoRows, { endpointId: string; slot: number; holder: string }>(
  {},
  (p) => sql`delete from outbound_endpoint_lease where endpoint_id = ${p.endpointId}::uuid and slot = ${p.slot}::int and holder = ${p.holder}::uuid`,
);

/** Runs `work` holding one of the endpoint's slots, or answers `busy` at once when all are taken. */
export async function withEndpointSlot<T>(
  em: EntityManager, endpointId: string, perEndpoint: number, work: () => Promise<T>,
): Promise<{ busy: true } | { busy: false; value: T }> {
  const holder = randomUUID();
  const taken = await em.transactional(async (tx) => {
    await lockEndpointSlots.first(tx, { endpointId });
    return takeSlot.first(tx, { endpointId, perEndpoint, holder, leaseMs: LEASE_MS });
  });
  if (!taken) return { busy: true };
  try {
    return { busy: false, value: await work() };
  } finally {
    await freeSlot.run(em, { endpointId, slot: taken.slot, holder });
  }
}
