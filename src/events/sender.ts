/**
 * One outbound webhook request (decisions §13), as Standard Webhooks 1.0 says: POST, JSON body,
 * `webhook-id`, `webhook-timestamp` and `webhook-signature` (one `v1,…` per secret that signs,
 * space-separated), signed by the reference library itself. 15 s for everything, no redirects
 * followed (node's http client follows none), the answer's first 1 KB kept.
 */
import http from 'node:http';
import https from 'node:https';
import { Webhook } from 'standardwebhooks';
import { ATTEMPT_TIMEOUT_MS, RESPONSE_EXCERPT_BYTES } from '../domain/outbound-events';
import { AddressRefusedError, checkLiteralHost, publicOnlyLookup } from './addresses';

export interface OutboundRequest {
  url: string;
  /** The event id: the same on every attempt. */
  webhookId: string;
  body: string;
  /** `whsec_…`: the current secret, and the previous one during a rotation's overlap. */
  secrets: string[];
  allowPrivate: boolean;
}

export interface AttemptResult {
  /** Null when no answer came. */
  status: number | null;
  /** Null when delivered; otherwise why not, in words. */
  error: string | null;
  durationMs: number;
  responseExcerpt: string;
}

/** The `webhook-signature` header: every secret's signature, space-separated. */
export function signatureHeader(secrets: string[], webhookId: string, at: Date, body: string): string {
  return secrets.map((secret) => new Webhook(secret).sign(webhookId, at, body)).join(' ');
}

/** Reads at most RESPONSE_EXCERPT_BYTES of the answer, then lets the rest go. */
function excerptOf(response: http.IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => resolve(Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES).toString('utf8'));
    response.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= RESPONSE_EXCERPT_BYTES) {
        response.destroy();
        done();
      }
    });
    response.on('end', done);
    response.on('error', done);
    response.on('close', done);
  });
}

function describe(error: unknown): string {
  if (error instanceof AddressRefusedError) return `refused: ${error.message}`;
  const e = error as NodeJS.ErrnoException;
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return `no answer within ${ATTEMPT_TIMEOUT_MS / 1000} s`;
  return e.code ? `${e.code}: ${e.message}` : e.message;
}

/** Sends one attempt; never throws: every failure is an answer with its reason. */
export async function sendWebhook(request: OutboundRequest): Promise<AttemptResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const url = new URL(request.url);
  try {
    if (!request.allowPrivate) {
      // Saved while OUTBOUND_WEBHOOKS_ALLOW_PRIVATE was on: refused now that it is off.
      if (url.protocol !== 'https:') throw new AddressRefusedError(`${url.protocol.replace(/:$/, '')} is not https`);
      checkLiteralHost(url);
    }
    const at = new Date();
    const client = url.protocol === 'https:' ? https : http;
    const { status, excerpt } = await new Promise<{ status: number; excerpt: string }>((resolve, reject) => {
      const req = client.request(url, {
        method: 'POST',
        signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
        ...(request.allowPrivate ? {} : { lookup: publicOnlyLookup }),
        headers: {
          'content-type': 'application/json',
          'user-agent': 'delivery-service-webhooks/1',
          'webhook-id': request.webhookId,
          'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
          'webhook-signature': signatureHeader(request.secrets, request.webhookId, at, request.body),
        },
      }, (response) => {
        excerptOf(response).then((text) => resolve({ status: response.statusCode ?? 0, excerpt: text }), reject);
      });
      req.on('error', reject);
      req.end(request.body);
    });
    const error = status >= 200 && status < 300 ? null
      : status >= 300 && status < 400 ? `HTTP ${status}: redirects are not followed`
        : `HTTP ${status}`;
    return { status, error, durationMs: elapsed(), responseExcerpt: excerpt };
  } catch (error) {
    return { status: null, error: describe(error), durationMs: elapsed(), responseExcerpt: '' };
  }
}
