import { startHarness, type Harness } from '../helpers/harness';
import { seedOrganisation } from '../helpers/seed';

let h: Harness;
let apiKey: string;
beforeAll(async () => {
  h = await startHarness({ worker: false });
  ({ apiKey } = await seedOrganisation(h));
});
afterAll(() => h?.close());

const auth = () => ({ authorization: `Bearer ${apiKey}` });

test('an unknown /api route is a JSON 404', async () => {
  const res = await h.app.inject({ method: 'GET', url: '/api/nothing-here', headers: auth() });
  expect(res.statusCode).toBe(404);
  expect(res.json()).toEqual({ error: 'not found' });
});

test('an over-long path parameter keeps the {error} contract and does not echo the path', async () => {
  const long = 'a'.repeat(5000);
  const res = await h.app.inject({ method: 'GET', url: `/api/products/${long}`, headers: auth() });
  expect(res.statusCode).toBe(414);
  expect(res.json()).toEqual({ error: 'path parameter too long' });
  expect(res.body).not.toContain(long);
});

test('an SKU as long as the front door keeps (1000 characters) still fits in a path: its route answers', async () => {
  const sku = encodeURIComponent('é'.repeat(1000));
  const res = await h.app.inject({ method: 'GET', url: `/api/unmatched-skus/${sku}/sales`, headers: auth() });
  expect(res.statusCode).toBe(404);
  expect(res.json().error).toMatch(/^no sale was held back by the SKU/);
});

test('a mistyped page address gets an HTML page for a browser, JSON for everyone else', async () => {
  const page = await h.app.inject({ method: 'GET', url: '/no-such-page', headers: { accept: 'text/html,application/xhtml+xml' } });
  expect(page.statusCode).toBe(404);
  expect(page.headers['content-type']).toMatch(/text\/html/);
  expect(page.body).toContain('Page not found');
  const api = await h.app.inject({ method: 'GET', url: '/api/no-such-thing', headers: { accept: 'text/html', ...auth() } });
  expect(api.json()).toEqual({ error: 'not found' });
  const plain = await h.app.inject({ method: 'GET', url: '/no-such-page' });
  expect(plain.json()).toEqual({ error: 'not found' });
});
