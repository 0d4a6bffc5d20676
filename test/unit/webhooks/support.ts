/** Shared helpers for the webhook adapter tests (not a test file itself). */
import { randomBytes } from 'node:crypto';
import {
  WebhookParseError,
  type NormalizedOrder,
  type NormalizedRevocation,
  type ParseResult,
  type PlatformAdapter,
  type WebhookRequest,
} from '../../../src/webhooks/adapter';
import { webhookSample } from '../../fixtures/samples';

/** The exact bytes of a sample file. */
export const fixture = webhookSample;

export function fixtureJson(name: string): Record<string, unknown> {
  return JSON.parse(fixture(name).toString('utf8')) as Record<string, unknown>;
}

export function request(
  rawBody: Buffer | string,
  headers: WebhookRequest['headers'] = {},
  query: WebhookRequest['query'] = {},
): WebhookRequest {
  return { rawBody: Buffer.isBuffer(rawBody) ? rawBody : Buffer.from(rawBody, 'utf8'), headers, query };
}

/** What a result is, for a failure message. */
function summary(result: ParseResult): string {
  return result.kind === 'ignored' ? `ignored: ${result.reason}` : result.kind;
}

/** The orders of a result that must carry orders. */
export function ordersOf(result: ParseResult): NormalizedOrder[] {
  if (result.kind !== 'orders') throw new Error(`expected orders, got ${summary(result)}`);
  return result.orders;
}

export function onlyOrder(result: ParseResult): NormalizedOrder {
  const orders = ordersOf(result);
  expect(orders).toHaveLength(1);
  return orders[0];
}

/** The refund and dispute events of a result that must carry them. */
export function revocationsOf(result: ParseResult): NormalizedRevocation[] {
  if (result.kind !== 'revocations') throw new Error(`expected revocations, got ${summary(result)}`);
  return result.revocations;
}

export function onlyRevocation(result: ParseResult): NormalizedRevocation {
  const revocations = revocationsOf(result);
  expect(revocations).toHaveLength(1);
  return revocations[0];
}

/** A copy of the bytes with one bit flipped at `index`. */
export function flipped(bytes: Buffer, index: number): Buffer {
  const copy = Buffer.from(bytes);
  copy[index] ^= 0x01;
  return copy;
}

/**
 * Random bytes, truncations and single-byte corruptions of a sample never throw anything but
 * WebhookParseError. `headers` go with every body (storefront-a's topic picks the refund parse).
 */
export function expectOnlyParseErrors(adapter: PlatformAdapter, sample: Buffer, rounds = 300, headers: WebhookRequest['headers'] = {}): void {
  const bodies: Buffer[] = [Buffer.alloc(0), Buffer.from('null'), Buffer.from('[]'), Buffer.from('"x"'), Buffer.from('{}')];
  for (let i = 0; i < rounds; i += 1) {
    bodies.push(randomBytes(1 + (i % 64)));
    bodies.push(sample.subarray(0, Math.floor((sample.length * i) / rounds)));
    const corrupt = Buffer.from(sample);
    corrupt[(i * 7919) % corrupt.length] = randomBytes(1)[0];
    bodies.push(corrupt);
  }
  for (const body of bodies) {
    try {
      const result = adapter.parse(request(body, headers));
      expect(['orders', 'revocations', 'mixed', 'ignored']).toContain(result.kind);
    } catch (error) {
      if (!(error instanceof WebhookParseError)) {
        throw new Error(`parse threw ${String(error)} for body ${JSON.stringify(body.toString('latin1'))}`);
      }
    }
  }
}

/** Replaces a JSON value in a body through a structured edit, then re-serialises compactly. */
export function editedBody(bytes: Buffer, edit: (body: Record<string, unknown>) => void): Buffer {
  const body = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
  edit(body);
  return Buffer.from(JSON.stringify(body), 'utf8');
}

/** `editedBody` of a sample. */
export function edited(name: string, edit: (body: Record<string, unknown>) => void): Buffer {
  return editedBody(fixture(name), edit);
}

/**
 * What every two-product sample (ebook-pro 29.00 + course-basic 49.00 USD, Sam Buyer, paid, live)
 * parses to; only the order id differs between platforms.
 */
export function sampleOrder(externalOrderId: string): NormalizedOrder {
  return {
    externalOrderId,
    customer: { email: 'buyer@example.com', name: 'Sam Buyer' },
    currency: 'USD',
    lines: [
      { sku: 'ebook-pro', quantity: 1, amount: '29.00' },
      { sku: 'course-basic', quantity: 1, amount: '49.00' },
    ],
    paid: true,
    test: false,
  };
}
