/**
 * The unclaimed-purchase reminder (decisions §16): one email with a fresh link to a buyer who has
 * completed no file transfer some time after the receipt was accepted. Plain data (the workflows'
 * sandbox imports it).
 */

/** The organisation setting's default: a day. */
export const DEFAULT_REMINDER_AFTER_MINUTES = 1440;
/** The setting's bounds, in whole minutes: a minute to a year. */
export const MIN_REMINDER_AFTER_MINUTES = 1;
export const MAX_REMINDER_AFTER_MINUTES = 525_600;

/** One purchase's reminder run: what the outbox row carries. `dueAt` was fixed when the receipt was accepted. */
export interface BuyerReminderRequest {
  orgId: string;
  purchaseId: string;
  /** ISO 8601: the receipt's acceptance plus the organisation's setting of that moment. */
  dueAt: string;
}

export type BuyerReminderInput = BuyerReminderRequest & {
  /** How long a temporarily refused reminder is retried (EMAIL_RETRY_WINDOW). */
  emailRetryWindowMs: number;
};

/** What became of a reminder: sent, or why not (checked when it was due). */
export const REMINDER_OUTCOMES = ['sent', 'transferred', 'revoked', 'test', 'notices-off'] as const;
export type ReminderOutcome = (typeof REMINDER_OUTCOMES)[number];

/** The sent-email log's business key of a purchase's reminder: one per purchase, ever. */
export function reminderBusinessKey(purchaseId: string): string {
  return `reminder:${purchaseId}`;
}
