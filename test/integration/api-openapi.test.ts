import { EVENT_TYPES } from '../../src/domain/outbound-events';
import { startHarness, type Harness } from '../helpers/harness';

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ worker: false });
});
afterAll(() => h?.close());

/** Every /api path and method of the spec and decisions §3, §9–§11 and §14, written in full. */
const API: Record<string, string[]> = {
  '/api/products': ['get', 'post'],
  '/api/products/{productId}': ['get', 'put'],
  '/api/products/{productId}/versions': ['get', 'post'],
  '/api/purchases': ['get', 'post'],
  '/api/purchases/{purchaseId}/revoke': ['post'],
  '/api/purchases/{purchaseId}/restore': ['post'],
  '/api/purchases/{purchaseId}/download-limit': ['put'],
  '/api/purchases/{purchaseId}/rearm': ['post'],
  '/api/purchases/{purchaseId}/evidence': ['get'],
  '/api/purchases/{purchaseId}/license': ['get'],
  '/api/purchases/{purchaseId}/license/activations/{instanceId}': ['delete'],
  '/api/customers': ['get'],
  '/api/webhook-deliveries': ['get'],
  '/api/unmatched-skus': ['get'],
  '/api/settings/integrations': ['get'],
  '/api/settings/integrations/{platform}': ['put'],
  '/api/settings/organisation': ['get', 'put'],
  '/api/settings/api-key/refresh': ['post'],
  '/api/reports/downloads': ['get'],
  '/api/webhook-endpoints': ['get', 'post'],
  '/api/webhook-endpoints/{id}': ['delete', 'get', 'patch'],
  '/api/webhook-endpoints/{id}/rotate-secret': ['post'],
  '/api/webhook-endpoints/{id}/test': ['post'],
  '/api/webhook-endpoints/{id}/attempts': ['get'],
  '/api/events': ['get'],
  '/api/events/{id}': ['get'],
  '/api/events/{id}/redeliver': ['post'],
};

interface OpenApi {
  openapi: string;
  webhooks?: Record<string, { post: { requestBody: { content: Record<string, { schema: { properties: Record<string, unknown> } }> } } }>;
  paths: Record<string, Record<string, {
    parameters?: Array<{ name: string; in: string }>;
    responses?: Record<string, { content?: Record<string, { schema?: { type?: string; items?: { properties?: Record<string, unknown> } } }> }>;
  }>>;
}

async function document(): Promise<OpenApi> {
  const res = await h.app.inject({ method: 'GET', url: '/openapi.json' });
  expect(res.statusCode).toBe(200);
  return res.json() as OpenApi;
}

test('/openapi.json is OpenAPI 3 and lists every /api path of decisions §3 with its methods', async () => {
  const doc = await document();
  expect(doc.openapi).toMatch(/^3\./);
  const listed = Object.fromEntries(Object.entries(API).map(([path]) => [path, Object.keys(doc.paths[path] ?? {}).sort()]));
  const expected = Object.fromEntries(Object.entries(API).map(([path, methods]) => [path, expect.arrayContaining(methods)]));
  expect(listed).toEqual(expected);
});

test('the webhooks section (OpenAPI 3.1) lists every outbound event type with its payload schema', async () => {
  const doc = await document();
  expect(doc.openapi).toBe('3.1.0');
  expect(Object.keys(doc.webhooks ?? {}).sort()).toEqual([...EVENT_TYPES, 'ping'].sort());
  const created = doc.webhooks!['purchase.created'].post.requestBody.content['application/json'].schema;
  expect(Object.keys(created.properties).sort()).toEqual(['data', 'id', 'timestamp', 'type']);
  expect(Object.keys((created.properties.data as { properties: object }).properties)).toContain('revokedAt');
});

test('path parameters are declared, and nothing is documented outside /api with a ":param" path', async () => {
  const doc = await document();
  for (const path of Object.keys(doc.paths)) expect(path).not.toMatch(/\/:/);
  const put = doc.paths['/api/settings/integrations/{platform}']?.put;
  expect(put?.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'platform', in: 'path' })]));
});

test('the streamed responses document what they carry', async () => {
  const doc = await document();
  const purchases = doc.paths['/api/purchases'].get.responses?.['200'].content?.['application/json']?.schema;
  expect(purchases?.type).toBe('array');
  expect(Object.keys(purchases?.items?.properties ?? {}).sort()).toEqual([
    'amount', 'createdAt', 'currency', 'customer', 'downloadLimit', 'externalOrderId', 'id', 'licenseKey', 'paymentMethod', 'productId',
    'receiptSentAt', 'revokeReason', 'revokedAt', 'source', 'test', 'versionId',
  ]);
  expect(doc.paths['/api/reports/downloads'].get.responses?.['200'].content).toHaveProperty(['text/csv']);
});

test('the lists serialized by fast-json-stringify still document their zod response schemas', async () => {
  const doc = await document();
  const products = doc.paths['/api/products'].get.responses?.['200'].content?.['application/json']?.schema;
  expect(Object.keys(products?.items?.properties ?? {}).sort()).toEqual(['activeVersion', 'product']);
  const deliveries = doc.paths['/api/webhook-deliveries'].get.responses?.['200'].content?.['application/json']?.schema;
  expect(Object.keys(deliveries?.items?.properties ?? {}).sort()).toEqual([
    'completedAt', 'externalOrderId', 'id', 'items', 'kind', 'platform', 'receivedAt', 'source', 'status', 'test', 'unmatched', 'workflowIds',
  ]);
});

test('/docs serves the OpenAPI UI', async () => {
  const res = await h.app.inject({ method: 'GET', url: '/docs/' });
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toMatch(/text\/html/);
});

test('an unknown /api route is 404 {error}', async () => {
  const res = await h.app.inject({ method: 'GET', url: '/api/nothing-here' });
  expect(res.statusCode).toBe(404);
  expect(res.json()).toEqual({ error: expect.any(String) });
});
