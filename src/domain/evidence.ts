/**
 * The dispute evidence record of one purchase (decisions §11): what a seller attaches to a
 * chargeback reply. `GET /api/purchases/{id}/evidence` answers it as JSON, or rendered as a PDF.
 * Times are ISO 8601 strings in UTC.
 */
import type { IssuedLicense } from './license-keys';

/** How a download link came to be issued. */
export const LINK_ORIGINS = ['receipt', 'my', 'fresh-link', 're-arm', 'update-notice', 'reminder', 'staff-resend', 'sale'] as const;
export type LinkOrigin = (typeof LINK_ORIGINS)[number];

/** How each origin reads on the purchase page and in the evidence PDF. */
export const LINK_ORIGIN_LABELS: Record<LinkOrigin, string> = {
  receipt: 'Receipt email',
  my: '/my request',
  'fresh-link': 'Fresh-link request',
  're-arm': 'Re-arm by staff',
  'update-notice': 'New version notice',
  reminder: 'Reminder email',
  'staff-resend': 'Resent by staff',
  sale: 'Shown to staff at the sale',
};

/**
 * How many page opens, file transfers and download-completes a record lists: the newest. A link
 * holder can add entries for as long as the link works; the record, the PDF and the purchase page
 * stay one bounded read and draw, and say how many older entries they leave out.
 */
export const EVIDENCE_ACCESS_ROWS = 200;

/** How an access reads in the PDF and on the purchase page: "page open", or "page open (3 times)". */
export function accessLabel(access: Pick<EvidenceRecord['accesses'][number], 'kind' | 'count'>): string {
  return access.count === 1 ? access.kind : `${access.kind} (${access.count} times)`;
}

export interface EvidenceDeliveryEntry {
  id: string;
  platform: string;
  kind: string;
  status: string;
  receivedAt: string;
  completedAt: string | null;
  items: Array<{ sku: string | null; outcome: string | null; reason: string | null }>;
}

/** An email to the buyer as the sent-email log keeps it. */
export interface EvidenceEmail {
  status: string;
  acceptedAt: string | null;
  messageId: string | null;
  recipients: string[];
  subject: string;
}

export interface EvidenceRecord {
  generatedAt: string;
  seller: { organisation: string; supportEmail: string | null };
  purchase: {
    id: string;
    product: string;
    version: string | null;
    createdAt: string;
    test: boolean;
    revokedAt: string | null;
    revokeReason: string | null;
  };
  customer: { name: string; email: string };
  /** The order as received. */
  order: {
    source: string;
    externalOrderId: string | null;
    amount: string;
    currency: string;
    paymentMethod: string;
    receivedAt: string;
    /** The delivery log entries of the order (none for API and dashboard sales). */
    deliveries: EvidenceDeliveryEntry[];
  };
  /** Each receipt email the mail server accepted or refused. */
  receipts: EvidenceEmail[];
  /** The reminder to download (decisions §16), when one was sent or tried: at most one per purchase. */
  reminder: EvidenceEmail | null;
  /** The newest EVIDENCE_ACCESS_ROWS download links issued for the purchase, oldest first. */
  links: Array<{ issuedAt: string; via: LinkOrigin; expiresAt: string; usedAt: string | null }>;
  /** The older links that `links` leaves out. */
  linksNotListed: number;
  /** The newest EVIDENCE_ACCESS_ROWS page opens, completed file transfers and download-completes, in time order. */
  accesses: Array<{
    at: string;
    kind: 'page open' | 'file transfer' | 'download complete';
    ip: string | null;
    userAgent: string | null;
    file: string | null;
    bytes: number | null;
    /** How many times: the page opens of one link within a minute are one entry (the first's time, IP and user agent). */
    count: number;
  }>;
  /** The older entries of that kind that `accesses` leaves out. */
  accessesNotListed: number;
  /** Staff actions on the purchase (revoke, restore, re-arm). */
  staffActions: Array<{ at: string; action: string; by: string | null; detail: string | null }>;
  /**
   * The purchase's license key and the newest EVIDENCE_ACCESS_ROWS installations of it, deactivated
   * ones included, with how many older ones are left out (decisions §14); null: none issued.
   */
  license: (IssuedLicense & { activationsNotListed: number }) | null;
}
