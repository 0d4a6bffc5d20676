/**
 * The front door's planning (decisions §4–§5), apart from its reads and writes: which SKUs a delivery
 * names, whether a verified order or refund can be recorded as it is, and the delivery log entries
 * and outbox rows (fulfilment runs, alerts, revocations) that record it. Plain values in, plain
 * values out: no database, no store, no I/O. `src/services/webhook-intake.ts` reads the candidate
 * organisations and their SKU matches, verifies, calls this, and records the plan.
 */
import { randomUUID } from 'node:crypto';
import type { NewEntry } from '../domain/delivery-entry';
import type { NewDispatch } from '../domain/dispatch';
import { isEmailAddress, normaliseEmail } from '../domain/email';
import { unstorableText } from '../domain/storable-text';
import { lineDispatch, type HeldLine } from '../domain/held-line';
import { alertWorkflowId, normaliseSku, revocationWorkflowId } from '../domain/ids';
import { fromMinorUnits } from '../domain/money';
import { planLine, type MatchedProduct } from '../domain/order-lines';
import type { Platform } from '../domain/platforms';
import type { RevocationRequest } from '../domain/revocation';
import { alertDue } from '../domain/statuses';
import { subscriptionExpired } from '../domain/subscription';
import type { NormalizedOrder, NormalizedRevocation, ParseResult, PlatformAdapter, WebhookRequest } from './adapter';

/** Bounds that keep a verified but absurd order out of workflow ids and numeric columns. */
export const MAX_ORDER_ID_LENGTH = 200;
const MAX_TEXT_LENGTH = 1000;
const MAX_AMOUNT_WHOLE_DIGITS = 15;
/**
 * The most UTF-8 bytes of a SKU: an unknown one is counted in a table whose unique index holds about
 * 2700 bytes an entry, and 1000 characters can take 4000.
 */
const MAX_SKU_BYTES = 2000;
/** ISO 4217 "no currency": the platform named none. */
const NO_CURRENCY = 'XXX';

/** Why the first of `values` that cannot be recorded cannot (longer than `maxLength`, or see `unstorableText`), or null. */
export function badText(values: Array<string | null>, maxLength: number): string | null {
  for (const value of values) {
    if (value === null) continue;
    if (value.length > maxLength) return 'is too long';
    const why = unstorableText(value);
    if (why !== null) return why;
  }
  return null;
}

/** Why a verified order cannot be recorded as it is (400), or null when it can. */
export function unreadable(order: NormalizedOrder): string | null {
  if (order.externalOrderId.length > MAX_ORDER_ID_LENGTH) return 'order id is too long';
  const bad = badText(
    [order.externalOrderId, order.customer.email, order.customer.name, order.paymentReference ?? null, ...order.lines.map((l) => l.sku)],
    MAX_TEXT_LENGTH,
  );
  if (bad !== null) return `a field of the order ${bad}`;
  if (order.lines.some((l) => l.sku !== null && Buffer.byteLength(l.sku) > MAX_SKU_BYTES)) return 'a SKU of the order is too long';
  for (const line of order.lines) {
    if (line.amount !== null && line.amount.split('.')[0].length > MAX_AMOUNT_WHOLE_DIGITS) return 'a line amount is out of range';
  }
  return null;
}

/** SKUs as sent, normalised (case-insensitive after trim), each once. */
export function normalisedSkus(sentSkus: Array<string | null>): string[] {
  return [...new Set(sentSkus.flatMap((sku) => (sku === null ? [] : [normaliseSku(sku)])))];
}

/** What a refund or dispute names: its order, or (payments-c) the payment the order was paid with. */
export function orderRefOf(revocation: NormalizedRevocation): Pick<RevocationRequest, 'refKind' | 'orderRef'> {
  return 'paymentReference' in revocation.order
    ? { refKind: 'payment', orderRef: revocation.order.paymentReference }
    : { refKind: 'order', orderRef: revocation.order.externalOrderId };
}

/** The orders a delivery carries (none for refunds only, or an ignored event). */
export function ordersOf(parsed: ParseResult): NormalizedOrder[] {
  return parsed.kind === 'orders' || parsed.kind === 'mixed' ? parsed.orders : [];
}

/** The refund and dispute events a delivery carries. */
export function revocationsOf(parsed: ParseResult): NormalizedRevocation[] {
  return parsed.kind === 'revocations' || parsed.kind === 'mixed' ? parsed.revocations : [];
}

/** The SKUs a delivery names, normalised: its orders' lines and the lines its refunds name (whole-order and partial refunds name none). */
export function skusOf(parsed: ParseResult): string[] {
  return normalisedSkus([
    ...ordersOf(parsed).flatMap((o) => o.lines.map((l) => l.sku)),
    ...revocationsOf(parsed).flatMap((r) => (r.scope.kind === 'lines' ? r.scope.skus : [])),
  ]);
}

/** Most SKUs looked up before the signature is checked: an unsigned request cannot make that read large. */
const MAX_SKUS_BEFORE_VERIFYING = 50;

export type EarlyParse = { ok: true; parsed: ParseResult } | { ok: false; error: unknown };

/**
 * The body is parsed before its signature is checked, so that its SKUs are looked up with the
 * organisation's secrets in one round trip. Nothing read is used unless the signature holds, and
 * an unreadable body is answered only after the signature check, as before.
 */
export function parseEarly(adapter: PlatformAdapter, request: WebhookRequest): EarlyParse {
  try {
    return { ok: true, parsed: adapter.parse(request) };
  } catch (error) {
    return { ok: false, error };
  }
}

/** The SKUs to look up with the secrets: none when there are many, or any the checks after verification refuse (NUL, length). */
export function skusToLookUp(early: EarlyParse): string[] {
  const skus = early.ok ? skusOf(early.parsed) : [];
  return skus.length <= MAX_SKUS_BEFORE_VERIFYING && badText(skus, MAX_TEXT_LENGTH) === null ? skus : [];
}

export interface Plan {
  entries: NewEntry[];
  /** Fulfilment starts, and alerts of entries final at once as Error with nothing delivered. */
  dispatches: NewDispatch[];
}

/** The organisation whose signature held, as far as planning needs it. */
export interface PlanningOrganisation {
  orgId: string;
  subscriptionExpiresOn: string | null;
}

/** payments-c: the payment an order was paid with, for its refunds to find it; absent otherwise. */
export function paymentReferenceOf(order: NormalizedOrder): { paymentReference?: string } {
  return order.paymentReference !== undefined ? { paymentReference: order.paymentReference } : {};
}

export function planDeliveries(
  org: PlanningOrganisation,
  platform: Platform,
  orders: NormalizedOrder[],
  matches: Map<string, MatchedProduct>,
  now: Date,
): Plan {
  const plan: Plan = { entries: [], dispatches: [] };
  for (const order of orders) {
    const email = order.customer.email === null ? null : normaliseEmail(order.customer.email);
    const facts = {
      paid: order.paid,
      subscriptionExpired: subscriptionExpired(org.subscriptionExpiresOn, now),
      hasCustomerEmail: email !== null && isEmailAddress(email),
    };
    const currency = order.currency ?? NO_CURRENCY;
    const entry: NewEntry = {
      id: randomUUID(), kind: 'order', platform, externalOrderId: order.externalOrderId, eventId: null, test: order.test, items: [], workflowIds: [],
    };
    for (const line of order.lines) {
      const itemId = randomUUID();
      const product = line.sku === null ? undefined : matches.get(normaliseSku(line.sku));
      const decided = planLine(line.sku, product, facts);
      // Unknown line amounts are recorded as zero in the order's currency, never guessed.
      const amount = line.amount ?? fromMinorUnits(0, currency)!;
      const sale: HeldLine = { customer: { email: email ?? '', name: order.customer.name ?? '' }, amount, currency, test: order.test, ...paymentReferenceOf(order) };
      if (decided.kind === 'final') {
        // An unknown SKU may be mapped later: the line keeps what delivering it then needs.
        const heldLine = decided.outcome === 'unmatched' && line.sku !== null ? sale : undefined;
        entry.items.push({ id: itemId, sku: line.sku, productId: decided.productId, outcome: decided.outcome, reason: decided.reason, workflowId: null, heldLine });
        continue;
      }
      const dispatch = lineDispatch({ orgId: org.orgId, platform, externalOrderId: order.externalOrderId, itemId }, sale, decided.productId);
      const { workflowId } = dispatch;
      entry.items.push({ id: itemId, sku: line.sku, productId: decided.productId, outcome: null, reason: null, workflowId });
      if (!entry.workflowIds.includes(workflowId)) entry.workflowIds.push(workflowId);
      plan.dispatches.push(dispatch);
    }
    if (alertDue(entry.items.map((i) => i.outcome))) {
      const payload = { orgId: org.orgId, platform, externalOrderId: order.externalOrderId, deliveryId: entry.id };
      const workflowId = alertWorkflowId(payload);
      entry.workflowIds.push(workflowId);
      plan.dispatches.push({ kind: 'order-alert', workflowId, orgId: org.orgId, payload });
    }
    plan.entries.push(entry);
  }
  return plan;
}

const LINE_WITHOUT_SKU = 'the refunded line has no SKU: it names no product';

/**
 * A refund or dispute event is one entry of kind refund/dispute (decisions §9). A partial refund by
 * amount is final at once (`kept`); otherwise each named line is an item (a whole-order event one
 * item that the run expands per purchase), decided by a `purchaseRevocation` run.
 */
export function planRevocations(orgId: string, platform: Platform, revocations: NormalizedRevocation[], matches: Map<string, MatchedProduct>): Plan {
  const plan: Plan = { entries: [], dispatches: [] };
  for (const revocation of revocations) {
    const { refKind, orderRef } = orderRefOf(revocation);
    const entry: NewEntry = {
      id: randomUUID(), kind: revocation.event, platform, externalOrderId: orderRef, eventId: revocation.eventId ?? null, test: false, items: [], workflowIds: [],
    };
    const { scope } = revocation;
    if (scope.kind === 'none') {
      entry.items.push({ id: randomUUID(), sku: null, productId: null, outcome: 'kept', reason: scope.reason, workflowId: null });
      plan.entries.push(entry);
      continue;
    }
    const request: RevocationRequest = {
      orgId, platform, deliveryId: entry.id, refKind, orderRef, reason: revocation.event === 'dispute' ? 'chargeback' : 'refund',
    };
    const workflowId = revocationWorkflowId(request);
    const skus = scope.kind === 'lines' ? scope.skus : [null];
    for (const sku of skus) {
      // A refunded line without a SKU (gift wrap, shipping protection) names no product: decided now,
      // since an undecided item without one stands for the whole order.
      if (scope.kind === 'lines' && sku === null) {
        entry.items.push({ id: randomUUID(), sku: null, productId: null, outcome: 'not found', reason: LINE_WITHOUT_SKU, workflowId: null });
        continue;
      }
      const productId = sku === null ? null : matches.get(normaliseSku(sku))?.productId ?? null;
      entry.items.push({ id: randomUUID(), sku, productId, outcome: null, reason: null, workflowId });
    }
    if (entry.items.some((item) => item.outcome === null)) {
      entry.workflowIds.push(workflowId);
      plan.dispatches.push({ kind: 'revoke', workflowId, orgId, payload: request });
    }
    plan.entries.push(entry);
  }
  return plan;
}

/** Why a verified refund or dispute cannot be recorded as it is (400), or null when it can. */
export function unreadableRevocation(revocation: NormalizedRevocation): string | null {
  const skus = revocation.scope.kind === 'lines' ? revocation.scope.skus : [];
  const bad = badText([orderRefOf(revocation).orderRef, revocation.eventId ?? null, ...skus], MAX_ORDER_ID_LENGTH);
  return bad === null ? null : `an id of the event ${bad}`;
}

/** A verified delivery's whole plan: its orders' entries, then its refunds' and disputes'. */
export function planIntake(
  org: PlanningOrganisation,
  platform: Platform,
  orders: NormalizedOrder[],
  revocations: NormalizedRevocation[],
  matches: Map<string, MatchedProduct>,
  now: Date,
): Plan {
  const orderPlan = planDeliveries(org, platform, orders, matches, now);
  const revocationPlan = planRevocations(org.orgId, platform, revocations, matches);
  return {
    entries: [...orderPlan.entries, ...revocationPlan.entries],
    dispatches: [...orderPlan.dispatches, ...revocationPlan.dispatches],
  };
}
