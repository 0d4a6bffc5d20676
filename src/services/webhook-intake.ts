/**
 * The webhook front door, without HTTP (decisions §4–§5): find the organisation, verify the
 * signature on the exact bytes, parse, decide each line (held, unmatched, to fulfil), and record
 * the delivery log entries together with the workflow starts they need (the outbox) in one
 * statement. Accept = recorded: the dispatcher starts or joins the workflows afterwards, so
 * Temporal's speed or absence never decides the answer. Every outcome is reported by the workflows.
 * The deciding is `src/webhooks/intake-plan.ts` (plain values, no database); this module does the
 * reads, the verification and the write around it.
 *
 * Failures are DomainErrors, so the one error handler answers them: unknown organisation 404,
 * not configured or bad signature 401 (nothing recorded), verified but unreadable 400.
 *
 * Integration health (decisions §15): a verified delivery counts in the statement that records it
 * (an ignored event in an upsert of its own); a refusal with a named reason (not configured, the
 * adapter's signature refusal, a replayed signed value, an unreadable verified body) costs one
 * upsert and keeps nothing of the body. Not counted: an unknown organisation, a shared-route body
 * unreadable before any secret could be chosen, and a verified delivery told to retry for backlog.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Orm } from '../db/orm';
import { StatementGroup } from '../db/statement-group';
import { BusyError, NotFoundError, UnauthorizedError, ValidationError } from '../domain/errors';
import type { MatchedProduct } from '../domain/order-lines';
import type { Platform } from '../domain/platforms';
import { isUuid } from '../domain/uuid';
import {
  WebhookParseError,
  type IntegrationSecrets,
  type SharedRoute,
  type PlatformAdapter,
  type WebhookRequest,
} from '../webhooks/adapter';
import {
  badText,
  MAX_ORDER_ID_LENGTH,
  ordersOf,
  parseEarly,
  planIntake,
  revocationsOf,
  skusOf,
  skusToLookUp,
  unreadable,
  unreadableRevocation,
} from '../webhooks/intake-plan';
import { adapters } from '../webhooks/registry';
import { skuMatches, type SkuMatchRow } from '../catalogue/catalogue-store';
import { deliveryWrite, recordDeliveries, type DeliveryWrite } from './delivery-log';
import { knownOrderIds } from '../deliveries/delivery-store';
import type { NormalizedOrder } from '../webhooks/adapter';
import { claimSignedNonce, ReplayRefusedError } from './signature-nonces';
import type { BacklogReadings } from './backlog-readings';
import type { KeyRing } from '../security/key-ring';
import { openSecret } from '../security/sealed-secrets';
import { candidatesByOrganisation, candidatesBySharedRoute, type CandidateLookup, type CandidateRow } from '../accounts/integration-store';
import { recordRefusal, recordVerified, verifiedMark } from '../accounts/integration-health-store';
import type { RefusalReason, SignatureRefusal } from '../domain/integration-health';

/** What the front door is built from, once per process. */
export interface IntakeSettings {
  orm: Orm;
  clock: () => Date;
  /** Opens the integration secrets, sealed at rest. */
  keyRing: KeyRing;
  /** Told after each commit that added outbox rows (whose), so they are dispatched at once. */
  onRecorded: (orgId: string) => void;
  /**
   * Outbox rows an organisation may have waiting before its deliveries are refused for now
   * (DISPATCH_ORGANISATION_BACKLOG), with what this process last read of each organisation's.
   */
  backlog: BacklogReadings;
}

export interface IntakeDeps extends IntakeSettings {
  /** Reads the organisation of a per-organisation path; concurrent deliveries share one statement. */
  readCandidate: (lookup: CandidateLookup) => Promise<CandidateRow[]>;
  /** Commits one delivery's rows; concurrent deliveries share one statement and its commit. */
  record: (write: DeliveryWrite) => Promise<void>;
}

/**
 * Each of the front door's grouped statements (its reads, its writes): at most this many
 * deliveries in one statement, and this many statements in flight (each holds one of the pool's
 * connections).
 */
const GROUP_MAX_BATCH = 100;
const GROUP_MAX_CONCURRENT = 2;

/**
 * The front door of this process: concurrent deliveries to organisations' own paths share their
 * organisation read, and all of them their write (StatementGroup), so under load a delivery costs
 * a share of one read and a share of one commit.
 */
export function frontDoorIntake(settings: IntakeSettings): IntakeDeps {
  const { orm } = settings;
  const candidateReads = new StatementGroup<CandidateLookup, CandidateRow[]>({
    run: (lookups) => candidatesByOrganisation(orm.em.fork(), lookups),
    maxBatch: GROUP_MAX_BATCH,
    maxConcurrent: GROUP_MAX_CONCURRENT,
  });
  const recorder = new StatementGroup<DeliveryWrite>({
    run: (writes) => recordDeliveries(orm.em.fork(), writes),
    maxBatch: GROUP_MAX_BATCH,
    maxConcurrent: GROUP_MAX_CONCURRENT,
  });
  return {
    ...settings,
    readCandidate: (lookup) => candidateReads.submit(lookup),
    record: (write) => recorder.submit(write),
  };
}

/** When an organisation whose outbox share is full is told to come back; its platform retries. */
const BACKLOG_RETRY_AFTER_SECONDS = 30;

/** Where a delivery was sent: an organisation's path, or (null) a platform's shared one. */
export interface IntakeTarget {
  platform: Platform;
  orgId: string | null;
}

interface Candidate {
  orgId: string;
  subscriptionExpiresOn: string | null;
  secrets: IntegrationSecrets | null;
  /** This organisation's products for the SKUs looked up with its secrets (see `skusToLookUp`). */
  matches: Map<string, MatchedProduct>;
  /** It has DISPATCH_ORGANISATION_BACKLOG outbox rows waiting or more (as read, or as known: see BacklogReadings). */
  backlogFull: boolean;
}

function matchesOf(rows: SkuMatchRow[]): Map<string, MatchedProduct> {
  return new Map(rows.map((row) => [row.sku, { productId: row.product_id, status: row.status, hasLiveVersion: row.live_version }]));
}

function candidateOf(deps: Pick<IntakeDeps, 'keyRing' | 'backlog'>, row: CandidateRow): Candidate {
  const open = (stored: string | null) => (stored === null ? null : openSecret(deps.keyRing, stored));
  return {
    orgId: row.id,
    subscriptionExpiresOn: row.subscription_expires_on,
    secrets: row.integration_id === null ? null : { secret: open(row.secret), privateKey: open(row.private_key), accountId: row.account_id },
    matches: matchesOf(row.matches),
    // Not counted (it was known): known still, unless a concurrent delivery's rows made it uncertain
    // since, which lets the cap be passed by at most the deliveries in flight.
    backlogFull: row.backlog_waiting === null ? deps.backlog.known(row.id) ?? false : deps.backlog.read(row.id, row.backlog_waiting),
  };
}

/**
 * The organisations whose secret may verify this delivery, each with its products for `skus`.
 * Per-organisation paths name one; on a shared path the event names it, else the account registered
 * on an integration does. Nothing read here is trusted beyond choosing which secret to check.
 */
async function candidatesFor(
  em: () => EntityManager,
  deps: Pick<IntakeDeps, 'keyRing' | 'backlog' | 'readCandidate'>,
  adapter: PlatformAdapter,
  target: IntakeTarget,
  request: WebhookRequest,
  skus: string[],
): Promise<Candidate[]> {
  const { platform } = adapter;
  const query = { skus, backlogCap: deps.backlog.cap, platform };
  if (adapter.routing.kind === 'per-organisation') {
    if (target.orgId === null || !isUuid(target.orgId)) throw new NotFoundError('organisation not found');
    const backlogKnown = deps.backlog.known(target.orgId) === undefined ? [] : [target.orgId];
    const found = (await deps.readCandidate({ ...query, backlogKnown, orgId: target.orgId })).map((row) => candidateOf(deps, row));
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
    em(), { ...query, backlogKnown: deps.backlog.allKnown() }, { orgId: named, accountId: route.accountId, paymentReference: route.paymentReference || null },
  )).map((row) => candidateOf(deps, row));
  if (found.length === 0) throw new NotFoundError('organisation not found');
  // The organisation the event names first: it wins should two of them share a secret.
  return found.sort((a, b) => Number(b.orgId === route.orgId) - Number(a.orgId === route.orgId));
}

function isConfigured(secrets: IntegrationSecrets | null): secrets is IntegrationSecrets {
  return Boolean(secrets?.secret || secrets?.privateKey);
}

/** The first candidate whose secret verifies the delivery, else why it was refused (the last one tried). */
function firstVerifying(adapter: PlatformAdapter, configured: Candidate[], request: WebhookRequest, now: Date): Candidate | SignatureRefusal {
  let refusal: SignatureRefusal = 'signature mismatch';
  for (const candidate of configured) {
    const check = adapter.verify(request, candidate.secrets!, now);
    if (check === 'verified') return candidate;
    refusal = check;
  }
  return refusal;
}

/** SKUs → their products in this organisation, for SKUs the candidate query did not look up. */
async function matchSkus(em: EntityManager, orgId: string, skus: string[]): Promise<Map<string, MatchedProduct>> {
  return matchesOf(await skuMatches(em, orgId, skus));
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
  // Forked only where a statement of this request's own needs it: a per-organisation delivery's read
  // and write go through the shared statements, and a fork per request was an eighth of its CPU.
  let forked: EntityManager | undefined;
  const em = () => (forked ??= deps.orm.em.fork());
  const early = parseEarly(adapter, request);
  const lookedUp = skusToLookUp(early);
  const candidates = await candidatesFor(em, deps, adapter, target, request, lookedUp);
  if (adapter.isUnsignedPing?.(request)) return [];

  const now = deps.clock();
  const { platform } = target;
  // A refusal is counted for the organisation the delivery was addressed to, and only when that
  // is one: always on a per-organisation path; on a shared route only when a single organisation
  // could be meant, so an unsigned request naming several cannot mark (or tell of) any of them.
  const addressee = candidates.length === 1 ? candidates[0].orgId : null;
  const refuse = async (orgId: string | null, reason: RefusalReason, error: Error): Promise<never> => {
    if (orgId !== null) await recordRefusal(em(), { orgId, platform, reason, at: now });
    throw error;
  };

  const configured = candidates.filter((c) => isConfigured(c.secrets));
  if (configured.length === 0) {
    return refuse(addressee, 'integration not configured', new UnauthorizedError(`the ${platform} integration is not configured`));
  }
  const verified = firstVerifying(adapter, configured, request, now);
  if (typeof verified === 'string') return refuse(addressee, verified, new UnauthorizedError('invalid or missing signature'));
  const org = verified;
  const unreadableBody = (message: string) => refuse(org.orgId, 'body unreadable', new ValidationError(message));

  if (!early.ok) {
    if (early.error instanceof WebhookParseError) return unreadableBody(early.error.message);
    throw early.error;
  }
  const { parsed } = early;
  if (parsed.kind === 'ignored') {
    await recordVerified(em(), { orgId: org.orgId, platform, at: now });
    return [];
  }
  // Past its share of the outbox an organisation's flood waits at its platform (which retries a
  // 503), not in front of other organisations' sales; only a verified delivery learns of it. Not
  // counted either way: the platform delivers it again.
  if (org.backlogFull) {
    throw new BusyError('too many of this organisation\'s deliveries are waiting to start, please retry', BACKLOG_RETRY_AFTER_SECONDS);
  }
  const orders = ordersOf(parsed);
  const revocations = revocationsOf(parsed);
  const problem = [...orders.map(unreadable), ...revocations.map(unreadableRevocation)].find((p) => p !== null);
  if (problem) return unreadableBody(problem);

  const skus = skusOf(parsed);
  const matches = skus.every((sku) => lookedUp.includes(sku)) ? org.matches : await matchSkus(em(), org.orgId, skus);
  const plan = planIntake(org, platform, orders, revocations, matches, now);
  // The verified count commits in the statement that records the delivery: no round trip of its own.
  const write = { ...deliveryWrite(org.orgId, plan.entries, plan.dispatches, now), health: [verifiedMark(org.orgId, platform, now)] };
  const nonce = adapter.signedNonce?.(request);
  if (nonce === undefined) {
    await deps.record(write);
  } else {
    try {
      // The nonce and the delivery commit together, so a replayed request is refused or recorded, never both.
      await em().transactional(async (tx) => {
        await claimSignedNonce(tx, { orgId: org.orgId, platform, nonce }, request.rawBody, now);
        await recordDeliveries(tx, [write]);
      });
    } catch (error) {
      // Counted after the rollback, which took everything of the transaction with it.
      if (error instanceof ReplayRefusedError) return refuse(org.orgId, 'signed value replayed', error);
      throw error;
    }
  }
  if (plan.dispatches.length > 0) {
    deps.backlog.added(org.orgId, plan.dispatches.length);
    deps.onRecorded(org.orgId);
  }
  return plan.entries.map((e) => e.id);
}

/**
 * Counts a body refused for its size (413, answered by Fastify before the handler runs) for the
 * organisation of a per-organisation path; a shared route's body, never read, names nobody.
 */
export async function countOversizedBody(deps: Pick<IntakeDeps, 'orm' | 'clock'>, target: IntakeTarget): Promise<void> {
  if (adapters[target.platform].routing.kind !== 'per-organisation' || target.orgId === null || !isUuid(target.orgId)) return;
  await recordRefusal(deps.orm.em.fork(), { orgId: target.orgId, platform: target.platform, reason: 'body too large', at: deps.clock() });
}


/** What recording one page of pulled orders found (decisions §15). */
export interface PulledOrdersOutcome {
  recovered: number;
  alreadyKnown: number;
  /** Orders that cannot be recorded as they are (the webhook would have been refused 400 for them). */
  unreadable: number;
}

/**
 * The intake of orders a reconciliation run read from the platform's order list: the same planning
 * and recording as a verified webhook, with the same business keys. A paid order the organisation
 * already has (an order entry in the log, or a purchase) is `alreadyKnown` and records nothing; an
 * unknown one is recorded as a log entry with source `reconciliation` and its fulfilment dispatched
 * through the outbox, exactly as a webhook's. Orders not paid yet are left for a later run (their
 * webhook, or the run after they are paid, brings them). A webhook of the same order recorded at the
 * same moment makes two entries but one run per line (the workflow ids are the business keys), so
 * one purchase and one receipt.
 */
export async function recordPulledOrders(
  orm: Orm, orgId: string, platform: Platform, orders: NormalizedOrder[], now: Date,
): Promise<PulledOrdersOutcome> {
  const em = orm.em.fork();
  const paid = orders.filter((order) => order.paid);
  const readable = paid.filter((order) => unreadable(order) === null);
  const known = await knownOrderIds(em, orgId, platform, readable.map((o) => o.externalOrderId));
  const unknown = readable.filter((order) => !known.has(order.externalOrderId));
  const outcome = { recovered: unknown.length, alreadyKnown: readable.length - unknown.length, unreadable: paid.length - readable.length };
  if (unknown.length === 0) return outcome;
  const skus = skusOf({ kind: 'orders', orders: unknown });
  // A run records what it found whatever the outbox holds (nobody retries it for the organisation the
  // way a platform retries a refused webhook, and one page is bounded): the backlog is not counted.
  const [[row]] = await candidatesByOrganisation(em, [{ skus, backlogCap: 0, backlogKnown: [orgId], platform, orgId }]);
  if (row === undefined) throw new NotFoundError('organisation not found');
  const org = { orgId, subscriptionExpiresOn: row.subscription_expires_on };
  const plan = planIntake(org, platform, unknown, [], matchesOf(row.matches), now);
  await recordDeliveries(em, [deliveryWrite(orgId, plan.entries, plan.dispatches, now, 'reconciliation')]);
  return outcome;
}
