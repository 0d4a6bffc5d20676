/**
 * Outbound events (decisions §13): the event types, the ids, and the rules of delivery that the
 * workflow and the services share. Plain data and pure functions (the workflows' sandbox imports it).
 */

/** Types an endpoint may subscribe to. `license.*` are recorded by license keys (§14) once they exist. */
export const EVENT_TYPES = [
  'purchase.created', 'purchase.revoked', 'purchase.restored', 'receipt.failed', 'download.completed',
  'delivery.failed', 'license.activated', 'license.deactivated',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];
/** `ping` is sent by "send test" only and never kept as an event. */
export type SentEventType = EventType | 'ping';

export const DELIVERY_STATES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/** Endpoints one organisation may have. */
export const MAX_ENDPOINTS = 10;
/** Requests one worker process sends to one endpoint at once. */
export const MAX_IN_FLIGHT_PER_ENDPOINT = 10;
/** One attempt: connect, send and read the answer. */
export const ATTEMPT_TIMEOUT_MS = 15_000;
/** The answer's body kept with the attempt. */
export const RESPONSE_EXCERPT_BYTES = 1024;
/** How long the previous secret still signs after a rotation. */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;

/** An event id: `evt_`, 14 hex digits of microseconds since 1970 and 12 random ones, so ids sort by time. */
export const EVENT_ID_RE = /^evt_[0-9a-f]{26}$/;

/** What a delivery run is for. */
export interface OutboundDeliveryTarget {
  eventId: string;
  endpointId: string;
}

/** A delivery run's input: its target and OUTBOUND_RETRY_SCHEDULE (the waits before each retry). */
export interface OutboundDeliveryInput extends OutboundDeliveryTarget {
  retryScheduleMs: number[];
}

/**
 * Outbound requests run on a task queue of their own (`<TEMPORAL_TASK_QUEUE>/outbound`) with its
 * own activity slots, so requests waiting on slow endpoints never hold the slots fulfilment needs.
 */
export const outboundTaskQueue = (taskQueue: string): string => `${taskQueue}/outbound`;

/** The one outcome of an attempt that matters to the run. */
export type AttemptOutcome =
  | { kind: 'delivered' }
  /** 410 Gone: the endpoint is disabled at once. */
  | { kind: 'gone' }
  | { kind: 'failed' }
  /** The endpoint was disabled (by hand, 410 or after failing too long): nothing more is sent. */
  | { kind: 'disabled' }
  /** MAX_IN_FLIGHT_PER_ENDPOINT requests are open to the endpoint already (from any worker): not an attempt, try again shortly. */
  | { kind: 'busy' };

/** Waits before a retry after a `busy` answer: short, spread, so a queue behind a slow endpoint drains in turn. */
export function busyWaitMs(tries: number, random: number): number {
  return Math.round(Math.min(30_000, 500 * 2 ** Math.min(tries, 6)) * (0.5 + random));
}
