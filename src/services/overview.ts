import type { EntityManager } from '@mikro-orm/postgresql';
import { outboxBacklog, type OutboxBacklog } from './workflow-outbox';
import { deliveryStatusCounts, unmatchedSkuTotal } from '../deliveries/delivery-store';
import { salesPerDay } from '../purchases/purchase-store';
import { transfersPerDay } from '../purchases/link-store';

export interface DayCount {
  /** YYYY-MM-DD (UTC). */
  day: string;
  sales: number;
  downloads: number;
}

export interface Overview {
  /** One entry per UTC day, oldest first, today last; days without activity count 0. */
  days: DayCount[];
  deliveries: { success: number; error: number; held: number; pending: number };
  /** Success / (Success + Error) over the period; null when nothing finished. */
  successRate: number | null;
  unmatchedSkus: number;
  /** Fulfilments recorded and waiting for the workflow engine. */
  backlog: OutboxBacklog;
}

const DAY_MS = 86_400_000;

/** The Overview page's figures for the `days` UTC days up to `now`, for one organisation. */
export async function overviewOf(em: EntityManager, orgId: string, now: Date, days = 30): Promise<Overview> {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const since = new Date(today - (days - 1) * DAY_MS);
  const [sales, downloads, statuses, unmatched, backlog] = await Promise.all([
    salesPerDay(em, orgId, since),
    transfersPerDay(em, orgId, since),
    deliveryStatusCounts(em, orgId, since),
    unmatchedSkuTotal(em, orgId),
    outboxBacklog(em, orgId),
  ]);

  const salesBy = new Map(sales.map((r) => [r.day, Number(r.n)]));
  const downloadsBy = new Map(downloads.map((r) => [r.day, Number(r.n)]));
  const result: DayCount[] = [];
  for (let i = 0; i < days; i += 1) {
    const day = new Date(since.getTime() + i * DAY_MS).toISOString().slice(0, 10);
    result.push({ day, sales: salesBy.get(day) ?? 0, downloads: downloadsBy.get(day) ?? 0 });
  }
  const count = (status: string) => Number(statuses.find((r) => r.status === status)?.n ?? 0);
  const deliveries = { success: count('Success'), error: count('Error'), held: count('held'), pending: count('Pending') };
  const finished = deliveries.success + deliveries.error;
  return {
    days: result,
    deliveries,
    successRate: finished === 0 ? null : deliveries.success / finished,
    unmatchedSkus: unmatched,
    backlog,
  };
}
