/**
 * Prometheus metrics of the API role at `/metrics` (fastify-metrics on prom-client): request rate
 * and latency per route and the process's own vitals, plus what only this service knows (webhook
 * acknowledgements, the outbox backlog, failed sign-ins, downloads). One registry per app, so that
 * several apps in one process (tests) never share series. The README lists every series.
 */
import client, { type Counter, type Registry } from '@prometheus-io/client';
import fastifyMetrics from 'fastify-metrics';
import type { FastifyInstance } from 'fastify';
import type { Orm } from '../db/orm';
import { outboundGauges } from '../events/outbound-events';
import { outboxBacklog, type OutboxBacklog } from '../services/workflow-outbox';

export interface ApiMetrics {
  /** Webhook deliveries answered, by platform and HTTP status. */
  webhookAcks: Counter<'platform' | 'status'>;
  /** Sign-ins refused (a wrong password, an unknown account, or past the attempt limits). */
  signinFailures: Counter;
  /** File responses that began sending bytes (whole files and ranges). */
  downloadsStarted: Counter;
  /** Completed transfers counted in the downloads ledger (their bytes cover the file). */
  downloadsCompleted: Counter;
  /** Bytes of file responses that went out whole. */
  downloadBytes: Counter;
  /** Stamped PDF copies made (decisions §16): one per (purchase, file), however many asked at once. */
  pdfCopiesStamped: Counter;
  /** The outbox backlog, read at most once per BACKLOG_MAX_AGE_MS (see there). */
  outboxBacklog: () => Promise<OutboxBacklog>;
}

/**
 * How old a reading of the outbox backlog may be. The count scans the outbox: /metrics and /readyz
 * (reachable by anyone who reaches the process) share one reading, so no number of requests makes
 * more than one count per this span (security review L4), and a scrape's two gauges share it too.
 */
export const BACKLOG_MAX_AGE_MS = 5_000;

export async function registerMetrics(app: FastifyInstance, orm: Orm, clock: () => Date): Promise<ApiMetrics> {
  const registry: Registry = new client.Registry();
  await app.register(fastifyMetrics, {
    endpoint: '/metrics',
    defaultMetrics: { enabled: true, register: registry },
    routeMetrics: {
      enabled: { histogram: true, summary: false },
      overrides: {
        histogram: { registers: [registry], buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] },
        // Made even when disabled: it must not land in the process-wide registry.
        summary: { registers: [registry] },
      },
    },
    promClient: client,
  });
  const counter = <L extends string>(name: string, help: string, labelNames: L[] = []) =>
    new client.Counter<L>({ name, help, labelNames, registers: [registry] });
  // Gauges read together share one query: /metrics and /readyz (reachable by anyone who reaches the
  // process) read the outbox at most once per BACKLOG_MAX_AGE_MS (security review L4), and a
  // scrape's gauges join the reading in progress.
  const sharedReading = <T>(read: () => Promise<T>) => {
    let last: { at: number; reading: Promise<T> } | undefined;
    return () => {
      const now = clock().getTime();
      if (!last || now - last.at >= BACKLOG_MAX_AGE_MS) last = { at: now, reading: read() };
      return last.reading;
    };
  };
  const readBacklog = sharedReading(() => outboxBacklog(orm.em.fork(), null));
  const readOutbound = sharedReading(() => outboundGauges(orm.em.fork()));
  new client.Gauge({
    name: 'delivery_outbox_waiting_rows',
    help: 'Workflow starts recorded and not yet taken by Temporal (all API processes share the outbox)',
    registers: [registry],
    async collect() {
      this.set((await readBacklog()).waiting);
    },
  });
  new client.Gauge({
    name: 'delivery_outbox_oldest_age_seconds',
    help: 'Age of the oldest workflow start waiting in the outbox (0 when none waits)',
    registers: [registry],
    async collect() {
      this.set((await readBacklog()).oldestAgeSeconds);
    },
  });
  new client.Gauge({
    name: 'delivery_outbox_dead_letters',
    help: 'Workflow starts Temporal refused for good or too often, kept as dead letters (their items ended error)',
    registers: [registry],
    async collect() {
      this.set((await readBacklog()).deadLetters);
    },
  });
  new client.Gauge({
    name: 'delivery_outbound_deliveries_waiting',
    help: 'Outbound webhook deliveries (event, endpoint) neither delivered nor failed yet',
    registers: [registry],
    async collect() {
      this.set((await readOutbound()).deliveriesWaiting);
    },
  });
  new client.Gauge({
    name: 'delivery_outbound_endpoints_disabled',
    help: 'Integrators\' webhook endpoints disabled (by hand, a 410, or failing for OUTBOUND_DISABLE_AFTER)',
    registers: [registry],
    async collect() {
      this.set((await readOutbound()).endpointsDisabled);
    },
  });
  return {
    webhookAcks: counter('delivery_webhook_acks_total', 'Webhook deliveries answered, by platform and status', ['platform', 'status']),
    signinFailures: counter('delivery_signin_failures_total', 'Dashboard sign-ins refused'),
    downloadsStarted: counter('delivery_downloads_started_total', 'File responses that began sending bytes'),
    downloadsCompleted: counter('delivery_downloads_completed_total', 'Completed transfers counted in the downloads ledger'),
    downloadBytes: counter('delivery_download_bytes_total', 'Bytes of file responses that went out whole'),
    pdfCopiesStamped: counter('delivery_pdf_copies_stamped_total', 'Stamped PDF copies made, one per purchase and file'),
    outboxBacklog: readBacklog,
  };
}
