/**
 * Signs a webhook body the way each sending platform does, so tests (unit and e2e) can send real,
 * verifiable requests. The crypto is written out here independently of src/webhooks/signature.ts, so
 * a mistake there is not mirrored here; header names are the spec's (the platforms' aliases are
 * tested separately).
 */
import { createHash, createHmac } from 'node:crypto';
import type { Platform } from '../../src/domain/platforms';
import type { IntegrationSecrets } from '../../src/webhooks/adapter';
import { wpSpecialcharsDecode } from '../../src/webhooks/plugin-b';

export interface SignedParts {
  headers: Record<string, string>;
  query: Record<string, string>;
}

function base64Hmac(key: string, body: Buffer): string {
  return createHmac('sha256', key).update(body).digest('base64');
}

function need(value: string | null | undefined, what: string): string {
  if (value === undefined || value === null || value === '') throw new Error(`signFor: ${what} is required`);
  return value;
}

/**
 * Headers and query parameters that make `rawBody` verify for `platform` with `secrets`.
 * `nowSeconds` (default: the current time) is the payments-c timestamp and the reseller-d-classic
 * security data.
 */
export function signFor(
  platform: Platform,
  rawBody: Buffer,
  secrets: IntegrationSecrets,
  nowSeconds: number = Math.floor(Date.now() / 1000),
): SignedParts {
  switch (platform) {
    case 'storefront-a':
      return { headers: { 'x-storefronta-hmac-sha256': base64Hmac(need(secrets.secret, 'secret'), rawBody) }, query: {} };
    case 'plugin-b': {
      const key = wpSpecialcharsDecode(need(secrets.secret, 'secret'));
      return { headers: { 'x-pluginb-webhook-signature': base64Hmac(key, rawBody) }, query: {} };
    }
    case 'payments-c': {
      const signature = createHmac('sha256', need(secrets.secret, 'secret'))
        .update(`${nowSeconds}.`)
        .update(rawBody)
        .digest('hex');
      return { headers: { 'paymentsc-signature': `t=${nowSeconds},v1=${signature}` }, query: {} };
    }
    case 'reseller-d':
      return { headers: { 'x-rd-signature': base64Hmac(need(secrets.secret, 'secret'), rawBody) }, query: {} };
    case 'reseller-d-classic': {
      const data = String(nowSeconds * 1000);
      const hash = createHash('md5').update(data + need(secrets.privateKey, 'privateKey')).digest('hex');
      return { headers: { 'x-security-data': data, 'x-security-hash': hash }, query: {} };
    }
    case 'cart-e':
      return { headers: {}, query: { secret: need(secrets.secret, 'secret') } };
  }
}
