import type { SignatureCheck } from '../domain/integration-health';
import type { Platform } from '../domain/platforms';

/** One order line as the platform sent it. The front door resolves `sku` to a product. */
export interface NormalizedLine {
  /** As sent (trimmed); null when the platform sent none. Matching is case-insensitive. */
  sku: string | null;
  quantity: number;
  /** Line amount in whole currency units as a decimal string ("29.00"), or null when unknown. */
  amount: string | null;
}

/** The one shape every platform's order notification is parsed into. */
export interface NormalizedOrder {
  /** Kept as a string exactly as sent (ids can exceed 2^53). */
  externalOrderId: string;
  customer: { email: string | null; name: string | null };
  /** Upper-case ISO code, or null when the platform did not say. */
  currency: string | null;
  lines: NormalizedLine[];
  /** False for orders that are not paid yet (they are held with reason `not paid`). */
  paid: boolean;
  /** Test-mode order: fulfilled, and marked `test: true`. */
  test: boolean;
  /** payments-c only: the organisation named in the event's metadata, if any. */
  orgId?: string;
  /** payments-c only: the connected account the event came from, if any. */
  accountId?: string;
  /**
   * payments-c only: the payment the order was paid with (`payment_intent`), which its refund and
   * dispute events name instead of the order.
   */
  paymentReference?: string;
}

/** Which purchases of an order a refund or dispute event takes back (decisions §9). */
export type RevocationScope =
  /** Every product of the order (a full refund, a dispute, a cancelled order). */
  | { kind: 'order' }
  /** The lines the event names, by SKU as sent (null when a named line carried none). */
  | { kind: 'lines'; skus: Array<string | null> }
  /** Money back without naming lines (a partial refund by amount): access is kept. */
  | { kind: 'none'; reason: string };

/** The order a refund or dispute event is about: its id, or (payments-c) the payment it names. */
export type OrderReference = { externalOrderId: string } | { paymentReference: string };

/** The one shape every platform's refund or dispute notification is parsed into. */
export interface NormalizedRevocation {
  event: 'refund' | 'dispute';
  order: OrderReference;
  scope: RevocationScope;
  /** payments-c only: the organisation named in the event's metadata, if any. */
  orgId?: string;
  /** payments-c only: the connected account the event came from, if any. */
  accountId?: string;
  /**
   * The platform's id of the event, the same on its redeliveries (payments-c, reseller-d), so a
   * redelivery is known for the event it repeats; absent where the platform sends none.
   */
  eventId?: string;
}

/** A webhook request as the front door received it: the exact bytes, never a re-serialised body. */
export interface WebhookRequest {
  rawBody: Buffer;
  /** Lower-case header names, as Node gives them. */
  headers: Record<string, string | string[] | undefined>;
  query: Record<string, string | undefined>;
}

/** The secrets an organisation configured for one platform (Settings, Integrations). */
export interface IntegrationSecrets {
  secret?: string | null;
  /** reseller-d-classic: the notification private key. */
  privateKey?: string | null;
  /** payments-c: the account id events of this organisation carry. */
  accountId?: string | null;
}

export type ParseResult =
  | { kind: 'orders'; orders: NormalizedOrder[] }
  /** Refund or dispute events (decisions §9): each is one delivery log entry of kind refund/dispute. */
  | { kind: 'revocations'; revocations: NormalizedRevocation[] }
  /** A batch carrying both (reseller-d): each order and each event is recorded as if it came alone. */
  | { kind: 'mixed'; orders: NormalizedOrder[]; revocations: NormalizedRevocation[] }
  /** Understood but carries nothing to act on (another event type, an activation ping ...): 200, nothing recorded. */
  | { kind: 'ignored'; reason: string };

/** Thrown by `parse` when a verified body cannot be read: the front door answers 400. */
export class WebhookParseError extends Error {
  override name = 'WebhookParseError';
}

/**
 * Who a delivery on a shared URL may be for: the organisation it names, the account it came from,
 * and for a refund or dispute the payment it names (whose purchases tell the organisation).
 */
export interface SharedRoute {
  orgId: string | null;
  accountId: string | null;
  paymentReference?: string | null;
}

/** Where an organisation's deliveries of a platform arrive, and how the organisation is known. */
export type PlatformRouting =
  /** Each organisation has its own URL, `/webhooks/{orgId}/{platform}`. */
  | { kind: 'per-organisation' }
  /**
   * One URL for every organisation, `/webhooks/{platform}`: an event names its organisation, or
   * the account it came from, which an organisation registers beside its secret.
   */
  | {
      kind: 'shared';
      /** Read before verification, only to choose whose secret to check. Throws WebhookParseError. */
      routeOf(request: WebhookRequest): SharedRoute;
      /** The hint beside the account id field on Settings › Integrations. */
      accountIdHint: string;
    };

/** The secret an organisation enters for a platform on Settings › Integrations. */
export interface SecretField {
  /** The field of the integration PUT body (and of the stored secrets) that carries it. */
  field: 'secret' | 'privateKey';
  /** Its label on the Integrations page. */
  label: string;
}

/**
 * Everything the service knows about one sales platform: the routes, the Integrations page,
 * integration settings and the OpenAPI text read it from here, so a platform is one file.
 */
export interface PlatformAdapter<P extends Platform = Platform> {
  readonly platform: P;
  /** What the platform posts (documentation only: every type is read as raw bytes). */
  readonly contentTypes: readonly string[];
  readonly secretField: SecretField;
  readonly routing: PlatformRouting;
  /** What the seller must still do with the webhook URL, or null when pasting it is enough. */
  readonly setupNote: string | null;
  /**
   * Constant-time check of the platform's signature over the exact raw bytes: `verified`, or which
   * refusal applies (the seller sees it on the Integrations page; the platform is told no more).
   */
  verify(request: WebhookRequest, secrets: IntegrationSecrets, now: Date): SignatureCheck;
  parse(request: WebhookRequest): ParseResult;
  /**
   * For a signature that does not cover the body (reseller-d-classic: md5 of its security data and
   * the key): the signed value that makes it unique. The service remembers it with a hash of the
   * body it came with, so the same signature with another body is refused as a replay. Absent for
   * platforms whose signature covers the body.
   */
  signedNonce?(request: WebhookRequest): string | undefined;
  /**
   * A request the platform sends unsigned that must be answered 200 and recorded nowhere
   * (plugin-b's activation ping). Absent for platforms without one.
   */
  isUnsignedPing?(request: WebhookRequest): boolean;
}
