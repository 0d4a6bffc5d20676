/**
 * The roles table of the spec and decisions §3 over every /api endpoint, and the auth rows of the
 * error table (401 missing or invalid key, 403 no organisation or expired subscription) on each.
 * "Allowed" is checked by the exact status an allowed caller gets (a 404 from a missing route or
 * a 401/403 fails it); "denied" is 403 in the endpoint's error format.
 */
import { AUTH_FAILURES, seedCallers, type ApiCallers } from '../helpers/api-callers';
import { startHarness, type Harness } from '../helpers/harness';
import { seedProduct, seedUser } from '../helpers/seed';
import type { Role } from '../../src/domain/statuses';

let h: Harness;
let c: ApiCallers;
let productId: string;

beforeAll(async () => {
  h = await startHarness({ worker: false });
  c = await seedCallers(h);
  productId = (await seedProduct(h, c.orgId)).productId;
});
afterAll(() => h?.close());

type Format = 'json' | 'html' | 'text';

interface Endpoint {
  name: string;
  method: 'GET' | 'POST' | 'PUT';
  url: () => string;
  /** content-type and payload; the payloads of writes are invalid on purpose: nothing changes. */
  body?: () => { type: string; payload: string };
  /** What an allowed caller gets. */
  allowed: number[];
  memberAllowed: boolean;
  errors: Format;
}

const json = (value: unknown) => () => ({ type: 'application/json', payload: JSON.stringify(value) });

const ENDPOINTS: Endpoint[] = [
  { name: 'GET /api/products', method: 'GET', url: () => '/api/products', allowed: [200], memberAllowed: true, errors: 'json' },
  { name: 'POST /api/products', method: 'POST', url: () => '/api/products', body: json({}), allowed: [400], memberAllowed: true, errors: 'json' },
  { name: 'GET /api/products/{productId}', method: 'GET', url: () => `/api/products/${productId}`, allowed: [200], memberAllowed: true, errors: 'json' },
  { name: 'PUT /api/products/{productId}', method: 'PUT', url: () => `/api/products/${productId}`, body: json({ status: 'not-a-status' }), allowed: [400], memberAllowed: true, errors: 'json' },
  { name: 'GET /api/products/{productId}/versions', method: 'GET', url: () => `/api/products/${productId}/versions`, allowed: [200], memberAllowed: true, errors: 'json' },
  { name: 'POST /api/products/{productId}/versions', method: 'POST', url: () => `/api/products/${productId}/versions`, body: json({}), allowed: [400, 415], memberAllowed: true, errors: 'json' },
  { name: 'GET /api/purchases', method: 'GET', url: () => '/api/purchases', allowed: [200], memberAllowed: true, errors: 'json' },
  { name: 'POST /api/purchases', method: 'POST', url: () => '/api/purchases', body: () => ({ type: 'application/x-www-form-urlencoded', payload: '' }), allowed: [400], memberAllowed: true, errors: 'html' },
  { name: 'GET /api/customers', method: 'GET', url: () => '/api/customers?email=a@example.com', allowed: [200], memberAllowed: true, errors: 'json' },
  { name: 'GET /api/webhook-deliveries', method: 'GET', url: () => '/api/webhook-deliveries', allowed: [200], memberAllowed: true, errors: 'json' },
  { name: 'GET /api/unmatched-skus', method: 'GET', url: () => '/api/unmatched-skus', allowed: [200], memberAllowed: true, errors: 'json' },
  { name: 'GET /api/settings/integrations', method: 'GET', url: () => '/api/settings/integrations', allowed: [200], memberAllowed: false, errors: 'json' },
  { name: 'PUT /api/settings/integrations/{platform}', method: 'PUT', url: () => '/api/settings/integrations/storefront-a', body: json({}), allowed: [400], memberAllowed: false, errors: 'json' },
  { name: 'GET /api/settings/api-key', method: 'GET', url: () => '/api/settings/api-key', allowed: [200], memberAllowed: true, errors: 'json' },
  { name: 'POST /api/settings/api-key/refresh', method: 'POST', url: () => '/api/settings/api-key/refresh', allowed: [200], memberAllowed: true, errors: 'json' },
  { name: 'GET /api/reports/downloads', method: 'GET', url: () => '/api/reports/downloads?from=2026-01-01&to=2026-01-31', allowed: [200], memberAllowed: false, errors: 'text' },
];

function call(endpoint: Endpoint, headers: Record<string, string>) {
  const body = endpoint.body?.();
  return h.app.inject({
    method: endpoint.method,
    url: endpoint.url(),
    headers: body ? { ...headers, 'content-type': body.type } : headers,
    payload: body?.payload,
  });
}

function expectErrorFormat(format: Format, res: { headers: Record<string, unknown>; body: string; json(): unknown }) {
  const type = String(res.headers['content-type']);
  if (format === 'json') {
    expect(type).toMatch(/^application\/json/);
    expect(res.json()).toEqual({ error: expect.any(String) });
  } else if (format === 'html') {
    expect(type).toMatch(/^text\/html/);
    expect(res.body).toMatch(/role="alert"/);
  } else {
    expect(type).toMatch(/^text\/plain/);
    expect(res.body.trim().length).toBeGreaterThan(0);
  }
}

const ROLES: Role[] = ['owner', 'admin', 'member'];
const TABLE = ENDPOINTS.flatMap((endpoint) => ROLES.map((role) => [endpoint.name, role, endpoint] as const));

describe('roles × endpoints', () => {
  test.each(TABLE)('%s as %s', async (_name, role, endpoint) => {
    // A fresh user per row: the refresh row rotates its caller's key.
    const user = await seedUser(h, c.orgId, role);
    const res = await call(endpoint, { authorization: `Bearer ${user.apiKey}` });
    if (role !== 'member' || endpoint.memberAllowed) {
      expect(endpoint.allowed).toContain(res.statusCode);
    } else {
      expect(res.statusCode).toBe(403);
      expectErrorFormat(endpoint.errors, res);
      expect(res.body).toContain('admin role required');
    }
  });
});

describe('auth rows of the error table on every endpoint', () => {
  const rows = ENDPOINTS.flatMap((endpoint) => AUTH_FAILURES.map(([what, status, headers]) => [endpoint.name, what, status, headers, endpoint] as const));
  test.each(rows)('%s with %s → %i', async (_name, _what, status, headers, endpoint) => {
    const res = await call(endpoint, headers(c));
    expect(res.statusCode).toBe(status);
    expectErrorFormat(endpoint.errors, res);
  });
});
