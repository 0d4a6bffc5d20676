/**
 * Sending real, signed platform deliveries to a harness, and waiting for what they cause. Bodies
 * are the samples' exact bytes (test/fixtures/webhooks) (or byte-level edits of them); signatures come from
 * signFor, which does its crypto independently of src/webhooks.
 */
import type { FastifyInstance } from 'fastify';
import { Integration, WebhookDelivery } from '../../src/db/entities';
import { PLATFORMS, type Platform } from '../../src/domain/platforms';
import type { IntegrationSecrets } from '../../src/webhooks/adapter';
import type { Harness } from './harness';
import { seedOrganisation, seedProduct, type SeededProduct, type SeedTarget } from './seed';
import { PLATFORM_FIXTURES, signFor, type PlatformFixture } from '../fixtures/platforms';
import { webhookSample } from '../fixtures/samples';
import { adapters, webhookPath as webhookPathOf } from '../../src/webhooks/registry';
import { sleep } from '../../src/dev/processes';

/** The samples' order ids, as the README lists them. */
export const SAMPLE_ORDER_IDS = byPlatform((f) => f.orderId);
/** SKUs in each sample, in order (cart-e sends one product per ping). */
export const SAMPLE_SKUS = byPlatform((f) => Object.keys(f.skus));
/** The README's secrets for its test vectors. */
export const SECRETS = byPlatform((f) => f.secrets);

function byPlatform<T>(pick: (fixture: PlatformFixture) => T): Record<Platform, T> {
  return Object.fromEntries(PLATFORMS.map((p) => [p, pick(PLATFORM_FIXTURES[p])])) as Record<Platform, T>;
}

function isForm(platform: Platform): boolean {
  return PLATFORM_FIXTURES[platform].contentType === 'application/x-www-form-urlencoded';
}

export function sample(platform: Platform): Buffer {
  return webhookSample(PLATFORM_FIXTURES[platform].sampleFile);
}

/** A byte-level edit of a sample (no re-serialisation): `replace` must match. */
export function edit(body: Buffer, search: string | RegExp, replacement: string): Buffer {
  const text = body.toString('utf8');
  const found = typeof search === 'string' ? text.includes(search) : new RegExp(search.source, search.flags.replace('g', '')).test(text);
  if (!found) throw new Error(`edit: ${String(search)} not found`);
  return Buffer.from(text.replace(search, replacement), 'utf8');
}

/** payments-c names its organisation in the session's metadata (our convention). */
export function withPaymentsCOrg(body: Buffer, orgId: string): Buffer {
  return edit(body, /"metadata": \{\n(\s+)"order_ref"/, `"metadata": {\n$1"org_id": "${orgId}",\n$1"order_ref"`);
}

/** The sample of a platform as it would be sent for `orgId`, with its order id replaced if asked. */
export function orderBody(platform: Platform, orgId: string, orderId?: string): Buffer {
  let body = sample(platform);
  if (platform === 'payments-c') body = withPaymentsCOrg(body, orgId);
  if (orderId !== undefined) body = withOrderId(platform, body, orderId);
  return body;
}

/** Replaces the sample's order id (every occurrence, so that related references stay consistent). */
export function withOrderId(platform: Platform, body: Buffer, orderId: string): Buffer {
  const original = SAMPLE_ORDER_IDS[platform];
  if (isForm(platform)) {
    return edit(body, new RegExp(encodeURIComponent(original).replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'g'), encodeURIComponent(orderId));
  }
  if (PLATFORM_FIXTURES[platform].orderIdIsLeadingNumber) {
    // A JSON number: the top-level "id" is the first key of the object.
    return edit(body, new RegExp(`^\\{\\n  "id": ${original},`), `{\n  "id": ${orderId},`);
  }
  return edit(body, new RegExp(original, 'g'), orderId);
}

/** The sample with the customer's email replaced. */
export function withEmail(platform: Platform, body: Buffer, email: string): Buffer {
  return isForm(platform)
    ? edit(body, /buyer%40example\.com/g, encodeURIComponent(email))
    : edit(body, /buyer@example\.com/g, email);
}

/**
 * Each platform's full-refund sample in test/fixtures/webhooks (decisions §9); storefront-a's refunds
 * one of its two lines (`ebook-pro`). reseller-d-classic sends no such notification.
 */
export const REFUND_SAMPLES = {
  'storefront-a': 'storefront-a.refund.json',
  'plugin-b': 'plugin-b.refunded.json',
  'payments-c': 'payments-c.charge-refunded.json',
  'reseller-d': 'reseller-d.return.json',
  'cart-e': 'cart-e.refunded.txt',
} as const satisfies Partial<Record<Platform, string>>;
export type RefundingPlatform = keyof typeof REFUND_SAMPLES;

/** The payment the payments-c order sample was paid with: its refunds and disputes name it, not the session. */
export const SAMPLE_PAYMENT_INTENT = 'pi_3QpLiveExamplePayIntent01';

/** A payments-c order, refund or dispute sample paid with another payment (every occurrence). */
export function withPaymentIntent(body: Buffer, paymentIntent: string): Buffer {
  return edit(body, new RegExp(SAMPLE_PAYMENT_INTENT, 'g'), paymentIntent);
}

/**
 * A refund or dispute sample of test/fixtures/webhooks about another order: `orderRef` replaces the
 * order id it names (every occurrence), or for payments-c the payment (`payment_intent`).
 */
export function revocationBody(platform: RefundingPlatform, file: string, orderRef: string): Buffer {
  const body = webhookSample(file);
  if (platform === 'payments-c') return withPaymentIntent(body, orderRef);
  if (platform === 'storefront-a') {
    // A Refund names its order in `order_id` (a JSON number), on itself and on each transaction.
    return edit(body, new RegExp(`"order_id": ${SAMPLE_ORDER_IDS[platform]}(?=[,\\n])`, 'g'), `"order_id": ${orderRef}`);
  }
  return withOrderId(platform, body, orderRef);
}

export function webhookPath(platform: Platform, orgId: string): string {
  return webhookPathOf(adapters[platform], orgId);
}

export function contentTypeOf(platform: Platform): string {
  return PLATFORM_FIXTURES[platform].contentType;
}

export interface SendOptions {
  secrets?: IntegrationSecrets;
  /** Replace (or with undefined values, drop) the signed headers. */
  headers?: Record<string, string | undefined>;
  query?: Record<string, string>;
  contentType?: string;
  nowSeconds?: number;
  /** Send without any signature. */
  unsigned?: boolean;
}

export interface SentDelivery {
  status: number;
  body: { received?: boolean; deliveryIds?: string[]; error?: string };
}

/** A listening app's base URL (real HTTP), or the app itself (inject). */
export type Receiver = string | FastifyInstance;

async function post(receiver: Receiver, url: string, headers: Record<string, string>, body: Buffer): Promise<{ status: number; text: string }> {
  if (typeof receiver !== 'string') {
    const res = await receiver.inject({ method: 'POST', url, headers, payload: body });
    return { status: res.statusCode, text: res.body };
  }
  const res = await fetch(`${receiver}${url}`, { method: 'POST', headers, body: new Uint8Array(body) });
  return { status: res.status, text: await res.text() };
}

/** A delivery as the platform would send it: path with query, signed headers, body. */
export function signedRequest(platform: Platform, orgId: string, body: Buffer, options: SendOptions = {}): { path: string; headers: Record<string, string>; body: Buffer } {
  const signed = options.unsigned
    ? { headers: {}, query: {} }
    : signFor(platform, body, options.secrets ?? SECRETS[platform], options.nowSeconds);
  const headers: Record<string, string> = { 'content-type': options.contentType ?? contentTypeOf(platform) };
  for (const [name, value] of Object.entries({ ...signed.headers, ...options.headers })) {
    if (value !== undefined) headers[name] = value;
  }
  const query = new URLSearchParams({ ...signed.query, ...options.query }).toString();
  return { path: `${webhookPath(platform, orgId)}${query ? `?${query}` : ''}`, headers, body };
}

/** POSTs a delivery, signed as the platform would sign it. */
export async function send(receiver: Receiver, platform: Platform, orgId: string, body: Buffer, options: SendOptions = {}): Promise<SentDelivery> {
  const request = signedRequest(platform, orgId, body, options);
  const res = await post(receiver, request.path, request.headers, request.body);
  let parsed: SentDelivery['body'] = {};
  try {
    parsed = JSON.parse(res.text) as SentDelivery['body'];
  } catch {
    parsed = { error: res.text };
  }
  return { status: res.status, body: parsed };
}

/** What a platform sends beside the signature with a refund: storefront-a's topic header. */
export const REVOCATION_HEADERS: Partial<Record<Platform, Record<string, string>>> = {
  'storefront-a': { 'x-storefronta-topic': 'refunds/create' },
};

/** POSTs a refund or dispute event, signed and with the headers the platform sends with one. */
export function sendRevocation(receiver: Receiver, platform: Platform, orgId: string, body: Buffer, options: SendOptions = {}): Promise<SentDelivery> {
  return send(receiver, platform, orgId, body, { ...options, headers: { ...REVOCATION_HEADERS[platform], ...options.headers } });
}

export async function configureIntegration(h: SeedTarget, orgId: string, platform: Platform, secrets: IntegrationSecrets = SECRETS[platform]) {
  const em = h.orm.em.fork();
  em.create(Integration, { organisation: orgId, platform, secret: secrets.secret ?? null, privateKey: secrets.privateKey ?? null, accountId: secrets.accountId ?? null });
  await em.flush();
}

export interface WebhookOrg {
  orgId: string;
  userId: string;
  apiKey: string;
  ebook: SeededProduct;
  course: SeededProduct;
}

/** An organisation with every integration configured and the samples' two products live. */
export async function seedWebhookOrg(
  h: SeedTarget,
  options: { subscriptionExpires?: string; platforms?: Platform[]; name?: string } = {},
): Promise<WebhookOrg & { name: string }> {
  const name = options.name ?? `Webhook org ${Math.random().toString(36).slice(2, 10)}`;
  const org = await seedOrganisation(h, { subscriptionExpires: options.subscriptionExpires, name });
  for (const platform of options.platforms ?? PLATFORMS) {
    await configureIntegration(h, org.orgId, platform);
  }
  const ebook = await seedProduct(h, org.orgId, { slug: 'ebook-pro', name: 'Ebook Pro' });
  const course = await seedProduct(h, org.orgId, { slug: 'course-basic', name: 'Course Basic' });
  return { ...org, name, ebook, course };
}

/**
 * Polls until `check` returns a value (not undefined), or fails after `timeoutMs`. `what` names the
 * wait in the failure; as a function it is read at the failure (a process's output by then).
 */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 30_000, what: string | (() => string) = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${typeof what === 'function' ? what() : what}`);
    await sleep(100);
  }
}

/** The entry with its items, once it is no longer Pending. */
export async function finalEntry(h: Harness, deliveryId: string, timeoutMs = 30_000): Promise<WebhookDelivery> {
  return eventually(async () => {
    const entry = await h.orm.em.fork().findOneOrFail(WebhookDelivery, deliveryId, { populate: ['items'] });
    return entry.status === 'Pending' ? undefined : entry;
  }, timeoutMs, `entry ${deliveryId} to be final`);
}

/**
 * Every workflow run of the entry, dispatched from the outbox and awaited to completion (so
 * nothing of it is still in flight).
 */
export async function settled(h: Harness, deliveryId: string): Promise<void> {
  const entry = await h.orm.em.fork().findOneOrFail(WebhookDelivery, deliveryId);
  await eventually(async () => {
    const [{ waiting }] = await h.orm.em.fork().execute<Array<{ waiting: string }>>(
      `select count(*) as waiting from workflow_dispatch where workflow_id in (${entry.workflowIds.map(() => '?').join(', ') || 'null'})`,
      entry.workflowIds,
    );
    return Number(waiting) === 0 ? true : undefined;
  }, 30_000, `the workflows of entry ${deliveryId} to be dispatched`);
  await Promise.all(entry.workflowIds.map((id) => h.temporal.workflow.getHandle(id).result().catch(() => undefined)));
}
