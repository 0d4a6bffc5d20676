/**
 * The worker's own series, recorded through the Temporal SDK's meter of the running activity: the
 * SDK exports them with its own metrics (tagged with the activity, task queue and namespace) on
 * the worker's Prometheus endpoint (WORKER_METRICS_ADDRESS).
 */
import { Context } from '@temporalio/activity';
import type { ItemOutcome } from '../src/domain/statuses';

const meter = () => Context.current().metricMeter;

/** Delivery items given their final outcome by a fulfilment run. */
export function countFulfilments(outcomes: ItemOutcome[]): void {
  const counter = meter().createCounter('delivery_fulfilments_total', 'items', 'Delivery items finished by fulfilment runs, by outcome');
  for (const outcome of outcomes) counter.add(1, { outcome });
}

/** One receipt attempt's time on SMTP, and whether it failed. */
export function recordReceiptSend(seconds: number, failed: boolean): void {
  meter().createHistogram('delivery_receipt_send_seconds', 'float', 's', 'Time to mint the link and hand a receipt to SMTP').record(seconds);
  if (failed) meter().createCounter('delivery_receipt_failures_total', 'attempts', 'Receipt attempts SMTP refused or that timed out').add(1);
}

/** Order alerts handed to SMTP. */
export function countAlertSent(): void {
  meter().createCounter('delivery_alerts_sent_total', 'emails', 'Order alerts to owners and admins handed to SMTP').add(1);
}

/** One outbound webhook attempt: its outcome (delivered, failed, gone) and how long the endpoint took. */
export function recordOutboundAttempt(outcome: string, seconds: number): void {
  meter().createCounter('delivery_outbound_attempts_total', 'attempts', 'Outbound webhook attempts, by outcome').add(1, { outcome });
  meter().createHistogram('delivery_outbound_attempt_seconds', 'float', 's', 'Time from sending an outbound webhook to its answer').record(seconds);
}
