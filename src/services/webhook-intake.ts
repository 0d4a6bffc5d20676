/**
 * The webhook front door, without HTTP (decisions §4–§5): find the organisation, verify the
 * signature on the exact bytes, parse, decide each line (held, unmatched, to fulfil), and record
 * the delivery log entries together with the workflow starts they need (the outbox) in one
 * statement. Accept = recorded: the dispatcher starts or joins the workflows afterwards, so
 * Temporal's speed or absence never decides the answer. Every outcome is reported by the workflows.
 *
 * Failures are DomainErrors, so the one error handler answers them: unknown organisation 404,
 * not configured or bad signature 401 (nothing recorded), verified but unreadable 400.
 */
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Orm } from '../db/orm';
import { BusyError, NotFoundError, UnauthorizedError, ValidationError } from '../domain/errors';
import type { NewDispatch } from '../domain/dispatch';
import { alertWorkflowId, fulfilLineWorkflowId, normaliseSku, revocationWorkflowId } from '../domain/ids';
import type { RevocationRequest } from '../domain/revocation';
import { fromMinorUnits } from '../domain/money';
import { planLine, type MatchedProduct } from '../domain/order-lines';
import type { Platform } from '../domain/platforms';
import { alertDue } from '../domain/statuses';
import { isUuid } from '../domain/uuid';
import { subscriptionExpired } from '../domain/subscription';
import {
  WebhookParseError,
  type IntegrationSecrets,
  type NormalizedOrder,
  type NormalizedRevocation,
  type ParseResult,
  type SharedRoute,
  type PlatformAdapter,
  type WebhookRequest,
} from '../webhooks/adapter';
import { adapters } from '../webhooks/registry';
import { skuMatches, type SkuMatchRow } from '../catalogue/catalogue-store';
import { deliveryWrite, recordDeliveries, type DeliveryWrite, type NewEntry } from './delivery-log';
import { claimSignedNonce } from './signature-nonces';
import type { KeyRing } from '../security/key-ring';
import { openSecret } from '../security/sealed-secrets';
import { isEmailAddress, normaliseEmail } from '../domain/email';
import { unstorableText } from '../domain/field-limits';
import { candidateByOrganisation, candidatesBySharedRoute, type CandidateRow } from '../accounts/integration-store';

export interface IntakeDeps {
  orm: Orm;
  clock: () => Date;
  /** Opens the integration secrets, sealed at rest. */
  keyRing: KeyRing;
  /**
   * Commits one delivery's rows; concurrent deliveries share a statement and a commit (the front
   * door's GroupCommit over `recordDeliveries`).
   */
  record: (write: DeliveryWrite) => Promise<void>;
  /** Told after each commit that added outbox rows, so they are dispatched at once. */
  onRecorded: () => void;
  /** Outbox rows an organisation may have waiting before its deliveries are refused for now (DISPATCH_ORGANISATION_BACKLOG). */
  organisationBacklog: number;
}

/** When an organisation whose outbox share is full is told to come back; its platform retries. */
const BACKLOG_RETRY_AFTER_SECONDS = 30;

/** Where a delivery was sent: an organisation's path, or (null) a platform's shared one. */
export interface IntakeTarget {
  platform: Platform;
  orgId: string | null;
}

/** Bounds that keep a verified but absurd order out of workflow ids and numeric columns. */
const MAX_ORDER_ID_LENGTH = 200;
const MAX_TEXT_LENGTH = 1000;
const MAX_AMOUNT_WHOLE_DIGITS = 15;
/**
 * The most UTF-8 bytes of a SKU: an unknown one is counted in a table whose unique index holds about
 * 2700 bytes an entry, and 1000 characters can take 4000.
 */
const MAX_SKU_BYTES = 2000;
/** ISO 4217 "no currency": the platform named none. */
const NO_CURRENCY = 'XXX';

interface Candidate {
  orgId: string;
  subscriptionExpiresOn: string | null;
  secrets: IntegrationSecrets | null;
  /** This organisation's products for the SKUs looked up with its secrets (see `skusToLookUp`). */
  matches: Map<string, MatchedProduct>;
  /** It has DISPATCH_ORGANISATION_BACKLOG outbox rows waiting or more. */
  backlogFull: boolean;
}

function matchesOf(rows: SkuMatchRow[]): Map<string, MatchedProduct> {
  return new Map(rows.map((row) => [row.sku, { productId: row.product_id, status: row.status, hasLiveVersion: row.live_version }]));
}

function candidateOf(keyRing: KeyRing, row: CandidateRow): Candidate {
  const open = (stored: string | null) => (stored === null ? null : openSecret(keyRing, stored));
  return {
    orgId: row.id,
    subscriptionExpiresOn: row.subscription_expires_on,
    secrets: row.integration_id === null ? null : { secret: open(row.secret), privateKey: open(row.private_key), accountId: row.account_id },
    matches: matchesOf(row.matches),
    backlogFull: row.backlog_full,
  };
}

/**
 * The organisations whose secret may verify this delivery, each with its products for `skus`.
 * Per-organisation paths name one; on a shared path the event names it, else the account registered
 * on an integration does. Nothing read here is trusted beyond choosing which secret to check.
 */
async function candidatesFor(
  em: EntityManager,
  deps: Pick<IntakeDeps, 'keyRing' | 'organisationBacklog'>,
  adapter: PlatformAdapter,
  target: IntakeTarget,
  request: WebhookRequest,
  skus: string[],
): Promise<Candidate[]> {
  const { platform } = adapter;
  const query = { skus, backlogCap: deps.organisationBacklog, platform };
  if (adapter.routing.kind === 'per-organisation') {
    if (target.orgId === null || !isUuid(target.orgId)) throw new NotFoundError('organisation not found');
    const found = (await candidateByOrganisation(em, query, target.orgId)).map((row) => candidateOf(deps.keyRing, row));
    if (found.length === 0) throw new NotFoundError('organisation not found');
    return found;
  }

  let route: SharedRoute;
  try {
    route = adapter.routing.routeOf(request);
  } catch (error) {
    // No organisation can be read, so no secret can be chosen: the body itself is the problem.
    if (error instanceof WebhookParseError) throw new ValidationError(error.message);
    throw error;
  }
  const unusable = badText([route.orgId, route.accountId, route.paymentReference ?? null], MAX_ORDER_ID_LENGTH);
  if (unusable !== null) throw new ValidationError(`the event's org_id, account or payment_intent ${unusable}`);

  // Every organisation the event may be for, tried alike: the one it names, those that registered its
  // account, those that sold with its payment (a dispute carries none of the session's metadata). Any
  // organisation can register any account id, so no one of them may hide the others: the signature
  // decides. Bounded, so an unsigned request cannot make the read large.
  const named = route.orgId !== null && isUuid(route.orgId) ? route.orgId : null;
  const found = named === null && route.accountId === null && !route.paymentReference ? [] : (await candidatesBySharedRoute(
    em, query, { orgId: named, accountId: route.accountId, paymentReference: route.paymentReference || null },
  )).map((row) => candidateOf(deps.keyRing, row));
  if (found.length === 0) throw new NotFoundError('organisation not found');
  // The organisation the event names first: it wins should two of them share a secret.
  return found.sort((a, b) => Number(b.orgId === route.orgId) - Number(a.orgId === route.orgId));
}

function isConfigured(secrets: IntegrationSecrets | null): secrets is IntegrationSecrets {
  return Boolean(secrets?.secret || secrets?.privateKey);
}

/** Why the first of `values` that cannot be recorded cannot (longer than `maxLength`, or see `unstorableText`), or null. */
function badText(values: Array<string | null>, maxLength: number): string | null {
  for (const value of values) {
    if (value === null) continue;
    if (value.length > maxLength) return 'is too long';
    const why = unstorableText(value);
    if (why !== null) return why;
  }
  return null;
}

/** Why a verified order cannot be recorded as it is (400), or null when it can. */
function unreadable(order: NormalizedOrder): string | null {
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
function normalisedSkus(sentSkus: Array<string | null>): string[] {
  return [...new Set(sentSkus.flatMap((sku) => (sku === null ? [] : [normaliseSku(sku)])))];
}

/** SKUs → their products in this organisation, for SKUs the candidate query did not look up. */
async function matchSkus(em: EntityManager, orgId: string, skus: string[]): Promise<Map<string, MatchedProduct>> {
  return matchesOf(await skuMatches(em, orgId, skus));
}

/** What a refund or dispute names: its order, or (payments-c) the payment the order was paid with. */
function orderRefOf(revocation: NormalizedRevocation): Pick<RevocationRequest, 'refKind' | 'orderRef'> {
  return 'paymentReference' in revocation.order
    ? { refKind: 'payment', orderRef: revocation.order.paymentReference }
    : { refKind: 'order', orderRef: revocation.order.externalOrderId };
}

/** The orders a delivery carries (none for refunds only, or an ignored event). */
function ordersOf(parsed: ParseResult): NormalizedOrder[] {
  return parsed.kind === 'orders' || parsed.kind === 'mixed' ? parsed.orders : [];
}

/** The refund and dispute events a delivery carries. */
function revocationsOf(parsed: ParseResult): NormalizedRevocation[] {
  return parsed.kind === 'revocations' || parsed.kind === 'mixed' ? parsed.revocations : [];
}

/** The SKUs a delivery names, normalised: its orders' lines and the lines its refunds name (whole-order and partial refunds name none). */
function skusOf(parsed: ParseResult): string[] {
  return normalisedSkus([
    ...ordersOf(parsed).flatMap((o) => o.lines.map((l) => l.sku)),
    ...revocationsOf(parsed).flatMap((r) => (r.scope.kind === 'lines' ? r.scope.skus : [])),
  ]);
}

/** Most SKUs looked up before the signature is checked: an unsigned request cannot make that read large. */
const MAX_SKUS_BEFORE_VERIFYING = 50;

type EarlyParse = { ok: true; parsed: ParseResult } | { ok: false; error: unknown };

/**
 * The body is parsed before its signature is checked, so that its SKUs are looked up with the
 * organisation's secrets in one round trip. Nothing read is used unless the signature holds, and
 * an unreadable body is answered only after the signature check, as before.
 */
function parseEarly(adapter: PlatformAdapter, request: WebhookRequest): EarlyParse {
  try {
    return { ok: true, parsed: adapter.parse(request) };
  } catch (error) {
    return { ok: false, error };
  }
}

/** The SKUs to look up with the secrets: none when there are many, or any the checks after verification refuse (NUL, length). */
function skusToLookUp(early: EarlyParse): string[] {
  const skus = early.ok ? skusOf(early.parsed) : [];
  return skus.length <= MAX_SKUS_BEFORE_VERIFYING && badText(skus, MAX_TEXT_LENGTH) === null ? skus : [];
}

interface Plan {
  entries: NewEntry[];
  /** Fulfilment starts, and alerts of entries final at once as Error with nothing delivered. */
  dispatches: NewDispatch[];
}

/** payments-c: the payment an order was paid with, for its refunds to find it; absent otherwise. */
function paymentReferenceOf(order: NormalizedOrder): { paymentReference?: string } {
  return order.paymentReference !== undefined ? { paymentReference: order.paymentReference } : {};
}

function planDeliveries(
  org: Candidate,
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
      if (decided.kind === 'final') {
        // An unknown SKU may be mapped later: the line keeps what delivering it then needs.
        const heldLine = decided.outcome === 'unmatched' && line.sku !== null
          ? { customer: { email: email ?? '', name: order.customer.name ?? '' }, amount, currency, test: order.test, ...paymentReferenceOf(order) }
          : undefined;
        entry.items.push({ id: itemId, sku: line.sku, productId: decided.productId, outcome: decided.outcome, reason: decided.reason, workflowId: null, heldLine });
        continue;
      }
      const payload = {
        orgId: org.orgId,
        source: platform,
        externalOrderId: order.externalOrderId,
        productId: decided.productId,
        customer: { email: email!, name: order.customer.name ?? '' },
        amount,
        currency,
        paymentMethod: platform,
        test: order.test,
        sendReceipt: true,
        deliveryItemId: itemId,
        ...paymentReferenceOf(order),
      };
      const workflowId = fulfilLineWorkflowId(payload);
      entry.items.push({ id: itemId, sku: line.sku, productId: decided.productId, outcome: null, reason: null, workflowId });
      if (!entry.workflowIds.includes(workflowId)) entry.workflowIds.push(workflowId);
      plan.dispatches.push({ kind: 'fulfil-line', workflowId, orgId: org.orgId, payload });
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

/**
 * A refund or dispute event is one entry of kind refund/dispute (decisions §9). A partial refund by
 * amount is final at once (`kept`); otherwise each named line is an item (a whole-order event one
 * item that the run expands per purchase), decided by a `purchaseRevocation` run.
 */
function planRevocations(orgId: string, platform: Platform, revocations: NormalizedRevocation[], matches: Map<string, MatchedProduct>): Plan {
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
      const productId = sku === null ? null : matches.get(normaliseSku(sku))?.productId ?? null;
      entry.items.push({ id: randomUUID(), sku, productId, outcome: null, reason: null, workflowId });
    }
    entry.workflowIds.push(workflowId);
    plan.dispatches.push({ kind: 'revoke', workflowId, orgId, payload: request });
    plan.entries.push(entry);
  }
  return plan;
}

/** Why a verified refund or dispute cannot be recorded as it is (400), or null when it can. */
function unreadableRevocation(revocation: NormalizedRevocation): string | null {
  const skus = revocation.scope.kind === 'lines' ? revocation.scope.skus : [];
  const bad = badText([orderRefOf(revocation).orderRef, revocation.eventId ?? null, ...skus], MAX_ORDER_ID_LENGTH);
  return bad === null ? null : `an id of the event ${bad}`;
}

/**
 * Handles one delivery up to its commit (entries, items, outbox rows) and returns the ids of the log
 * entries it recorded: none for an ignored event or plugin-b's activation ping.
 */
export async function receiveDelivery(
  deps: IntakeDeps,
  target: IntakeTarget,
  request: WebhookRequest,
): Promise<string[]> {
  const adapter = adapters[target.platform];
  const em = deps.orm.em.fork();
  const early = parseEarly(adapter, request);
  const lookedUp = skusToLookUp(early);
  const candidates = await candidatesFor(em, deps, adapter, target, request, lookedUp);
  if (adapter.isUnsignedPing?.(request)) return [];

  const configured = candidates.filter((c) => isConfigured(c.secrets));
  if (configured.length === 0) throw new UnauthorizedError(`the ${target.platform} integration is not configured`);
  const now = deps.clock();
  const org = configured.find((c) => adapter.verify(request, c.secrets!, now));
  if (!org) throw new UnauthorizedError('invalid or missing signature');

  if (!early.ok) {
    if (early.error instanceof WebhookParseError) throw new ValidationError(early.error.message);
    throw early.error;
  }
  const { parsed } = early;
  if (parsed.kind === 'ignored') return [];
  // Past its share of the outbox an organisation's flood waits at its platform (which retries a
  // 503), not in front of other organisations' sales; only a verified delivery learns of it.
  if (org.backlogFull) {
    throw new BusyError('too many of this organisation\'s deliveries are waiting to start, please retry', BACKLOG_RETRY_AFTER_SECONDS);
  }
  const orders = ordersOf(parsed);
  const revocations = revocationsOf(parsed);
  const problem = [...orders.map(unreadable), ...revocations.map(unreadableRevocation)].find((p) => p !== null);
  if (problem) throw new ValidationError(problem);

  const skus = skusOf(parsed);
  const matches = skus.every((sku) => lookedUp.includes(sku)) ? org.matches : await matchSkus(em, org.orgId, skus);
  const orderPlan = planDeliveries(org, target.platform, orders, matches, now);
  const revocationPlan = planRevocations(org.orgId, target.platform, revocations, matches);
  const plan: Plan = {
    entries: [...orderPlan.entries, ...revocationPlan.entries],
    dispatches: [...orderPlan.dispatches, ...revocationPlan.dispatches],
  };
  const write = deliveryWrite(org.orgId, plan.entries, plan.dispatches, now);
  const nonce = adapter.signedNonce?.(request);
  if (nonce === undefined) {
    await deps.record(write);
  } else {
    // The nonce and the delivery commit together, so a replayed request is refused or recorded, never both.
    await em.transactional(async (tx) => {
      await claimSignedNonce(tx, { orgId: org.orgId, platform: target.platform, nonce }, request.rawBody, now);
      await recordDeliveries(tx, [write]);
    });
  }
  if (plan.dispatches.length > 0) deps.onRecorded();
  return plan.entries.map((e) => e.id);
}
