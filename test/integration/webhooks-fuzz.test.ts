/**
 * No body of any shape produces a 5xx at any webhook endpoint: random bytes, mangled samples,
 * random JSON and forms, odd content types and headers; and (so that the parsers and the
 * recording are reached too) mangled samples carrying a valid signature. Seeded and bounded, so a
 * failure names the case that reproduces it.
 */
import { randomUUID } from 'node:crypto';
import { PLATFORMS, type Platform } from '../../src/domain/platforms';
import { startHarness, type Harness } from '../helpers/harness';
import { signFor } from '../fixtures/platforms';
import { PLATFORM_FIXTURES } from '../fixtures/platforms';
import { webhookSample } from '../fixtures/samples';
import { UNSTORABLE_TEXT } from '../helpers/fuzz';
import { orderBody, REFUND_SAMPLES, REVOCATION_HEADERS, SECRETS, seedWebhookOrg, webhookPath, withPaymentsCOrg, type WebhookOrg } from '../helpers/webhooks';
import { prng, type Rng } from '../helpers/prng';

const SEED = Number(process.env.FUZZ_SEED ?? 20261125);
const ROUNDS = Number(process.env.FUZZ_ROUNDS ?? 2000);


const CONTENT_TYPES = [
  undefined, 'application/json', 'application/x-www-form-urlencoded', 'text/plain', 'application/octet-stream',
  'multipart/form-data; boundary=xyz', 'application/json; charset=latin1', 'a/b;;=', '*/*', 'application/xml', '',
];

const STRANGE_VALUES = [
  null, true, 0, -1, 1e308, 2 ** 64, '9'.repeat(40), '', ' ', '\u0000', '\ud800', '💥', 'a'.repeat(5000), [], {}, [[]], { a: {} },
];

function randomJson(rng: Rng, depth = 0): unknown {
  if (depth > 3 || rng.next() < 0.3) return rng.pick(STRANGE_VALUES);
  if (rng.next() < 0.5) return Array.from({ length: rng.int(4) }, () => randomJson(rng, depth + 1));
  const keys = ['id', 'line_items', 'sku', 'events', 'data', 'object', 'metadata', 'org_id', 'type', 'items', 'email', 'currency', 'status', 'financial_status'];
  return Object.fromEntries(Array.from({ length: rng.int(6) }, () => [rng.pick(keys), randomJson(rng, depth + 1)]));
}

function randomForm(rng: Rng): string {
  const keys = ['reference', 'sale_id', 'item_1_product', 'item_999999_product', 'item_1_quantity', 'email', 'price', 'currency', 'permalink', 'test', 'resource_name', 'webhook_id', 'security_data', 'security_hash'];
  const form = new URLSearchParams();
  for (let i = rng.int(8); i > 0; i -= 1) form.append(rng.pick(keys), String(rng.pick(STRANGE_VALUES)));
  return form.toString();
}

/** A sample with a few bytes changed, cut short, or with a value swapped for a strange one. */
function mangle(rng: Rng, body: Buffer): Buffer {
  const choice = rng.int(4);
  if (choice === 0) return body.subarray(0, rng.int(body.length));
  if (choice === 1) {
    const copy = Buffer.from(body);
    for (let i = 0; i < 1 + rng.int(5); i += 1) copy[rng.int(copy.length)] = rng.int(256);
    return copy;
  }
  if (choice === 2) {
    const text = body.toString('utf8');
    const values = ['null', '""', '"\\u0000"', '"a\\u0000b"', '"\\ud800"', '[]', '{}', '-1', '1e999', '"💥"', `"${'9'.repeat(300)}"`, '12345678901234567890'];
    return Buffer.from(text.replace(/: ("[^"]*"|\d+|true|false|null)/, () => `: ${rng.pick(values)}`));
  }
  return Buffer.concat([body, rng.bytes(rng.int(32))]);
}

/** The body with its `index`-th text value (JSON string, or form field) replaced by `value`; null past the last. */
function withTextAt(body: Buffer, form: boolean, index: number, value: string): Buffer | null {
  if (form) {
    const fields = new URLSearchParams(body.toString('utf8'));
    const names = [...fields.keys()];
    if (index >= names.length) return null;
    fields.set(names[index], value);
    return Buffer.from(fields.toString());
  }
  let seen = 0;
  let replaced = false;
  const walk = (node: unknown): unknown => {
    if (typeof node === 'string') return seen++ === index ? ((replaced = true), value) : node;
    if (Array.isArray(node)) return node.map(walk);
    if (node !== null && typeof node === 'object') return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, walk(v)]));
    return node;
  };
  const edited = walk(JSON.parse(body.toString('utf8')));
  return replaced ? Buffer.from(JSON.stringify(edited)) : null;
}

describe('webhook fuzz', () => {
  let h: Harness;
  let org: WebhookOrg;
  beforeAll(async () => {
    h = await startHarness();
    org = await seedWebhookOrg(h);
  });
  afterAll(() => h?.close());

  test(`${ROUNDS} random deliveries (seed ${SEED}) never get a 5xx`, async () => {
    const rng = prng(SEED);
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    for (let round = 0; round < ROUNDS; round += 1) {
      const platform: Platform = rng.pick(PLATFORMS);
      const orgId = rng.pick([org.orgId, org.orgId, org.orgId, randomUUID(), 'not-a-uuid', '%00', '..']);
      const kind = rng.int(5);
      let body: Buffer;
      if (kind === 0) body = rng.bytes(rng.int(200));
      else if (kind === 1) body = Buffer.from(JSON.stringify(randomJson(rng)) ?? '');
      else if (kind === 2) body = Buffer.from(randomForm(rng));
      else body = mangle(rng, orderBody(platform, org.orgId));

      // Half of the mangled samples carry a valid signature, so that they reach the parser.
      const signed = kind >= 3 && rng.next() < 0.5 ? signFor(platform, body, SECRETS[platform]) : { headers: {}, query: {} };
      const headers: Record<string, string> = { ...signed.headers };
      const contentType = rng.pick(CONTENT_TYPES);
      if (contentType !== undefined) headers['content-type'] = contentType;
      if (rng.next() < 0.2) headers[rng.pick(['x-storefronta-hmac-sha256', 'paymentsc-signature', 'x-security-hash', 'x-rd-signature'])] = rng.pick(['', 't=1,v1=', 'AAAA', 't=abc', '\u00ff']);
      const query = new URLSearchParams(signed.query);
      if (rng.next() < 0.1) query.append('secret', rng.pick(['', 'x', 'test-secret-cart-e']));

      // The organisation id may be any fuzzed text: encoded, as a client would send it.
      const path = webhookPath(platform, encodeURIComponent(orgId));
      const res = await h.app.inject({ method: 'POST', url: `${path}${query.size ? `?${query}` : ''}`, headers, payload: body });
      statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
      if (res.statusCode >= 500) {
        failures.push(`round ${round}: ${platform} ${contentType} ${res.statusCode} ${res.body} body=${JSON.stringify(body.toString('latin1').slice(0, 200))}`);
      }
    }
    expect(failures).toEqual([]);
    // The fuzz reached every kind of answer, including accepted deliveries.
    expect([...statuses.keys()].sort()).toEqual(expect.arrayContaining([200, 400, 401, 404]));
  });

  test('NUL or a lone surrogate in any text field of any signed order or refund sample is never a 5xx', async () => {
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    // reseller-d-classic signs a nonce, not the body: one nonce per case, or the cases would be replays of each other.
    let nowSeconds = Math.floor(Date.now() / 1000) - 100_000;
    for (const platform of PLATFORMS) {
      const refund = (REFUND_SAMPLES as Partial<Record<Platform, string>>)[platform];
      const samples = [orderBody(platform, org.orgId), ...(refund === undefined ? [] : [webhookSample(refund)])];
      const form = PLATFORM_FIXTURES[platform].contentType === 'application/x-www-form-urlencoded';
      for (const [n, sampleBody] of samples.entries()) {
        const base = platform === 'payments-c' && n > 0 ? withPaymentsCOrg(sampleBody, org.orgId) : sampleBody;
        for (const value of [UNSTORABLE_TEXT[1], UNSTORABLE_TEXT[4]]) {
          for (let index = 0; ; index += 1) {
            const body = withTextAt(base, form, index, value);
            if (body === null) break;
            nowSeconds += 1;
            const signed = signFor(platform, body, SECRETS[platform], platform === 'reseller-d-classic' ? nowSeconds : undefined);
            const query = new URLSearchParams(signed.query);
            const res = await h.app.inject({
              method: 'POST',
              url: `${webhookPath(platform, org.orgId)}${query.size ? `?${query}` : ''}`,
              headers: { 'content-type': PLATFORM_FIXTURES[platform].contentType, ...(n > 0 ? REVOCATION_HEADERS[platform] : {}), ...signed.headers },
              payload: body,
            });
            statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
            if (res.statusCode >= 500) failures.push(`${platform} sample ${n} text #${index} = ${JSON.stringify(value)}: ${res.statusCode} ${res.body}`);
          }
        }
      }
    }
    expect(failures).toEqual([]);
    expect(statuses.get(400)).toBeGreaterThan(0);
  }, 240_000);
});
