/**
 * A request for fresh download links: from /my (every purchase of an email address, one email per
 * organisation) or from the button of an expired link's page (that link's purchase only, to the
 * purchase's own email). The input of the `freshLinks` workflow.
 */
export interface FreshLinksRequest {
  /** Random per HTTP request: the workflow id and the idempotency key of its emails. */
  requestId: string;
  target: { email: string } | { purchaseId: string };
  /** Staff asked (a re-arm, decisions §10, or the dashboard's "Resend link") rather than the buyer; absent otherwise. */
  via?: 're-arm' | 'staff-resend';
  /** How long temporary SMTP failures are retried (EMAIL_RETRY_WINDOW). */
  emailRetryWindowMs: number;
}

/** A fresh-links request as the service asks for it: the workflow starter adds the retry window. */
export type FreshLinksAsk = Omit<FreshLinksRequest, 'emailRetryWindowMs'>;

/** The purchases of one customer (customers are per organisation): one email. */
export interface FreshLinksGroup {
  orgId: string;
  customerId: string;
  purchaseIds: string[];
  /** How the links were asked for; absent in runs recorded before it was kept (then `my`). */
  via?: 'my' | 'fresh-link' | 're-arm' | 'staff-resend';
}
