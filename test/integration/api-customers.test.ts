import { Customer } from '../../src/db/entities';
import { startHarness, type Harness } from '../helpers/harness';
import { seedOrganisation } from '../helpers/seed';

let h: Harness;
let org: { orgId: string; apiKey: string };
let other: { orgId: string; apiKey: string };
const ids: Record<string, string> = {};

beforeAll(async () => {
  h = await startHarness({ worker: false });
  org = await seedOrganisation(h);
  other = await seedOrganisation(h);
  const em = h.orm.em.fork();
  const add = (orgId: string, email: string, name: string, createdAt: string) =>
    em.create(Customer, { organisation: orgId, email, name, createdAt: new Date(createdAt) }).id;
  ids.ada = add(org.orgId, 'ada@example.com', 'Ada Buyer', '2026-01-01T00:00:00.000Z');
  ids.bob = add(org.orgId, 'bob@example.com', 'Bob Buyer', '2026-01-02T00:00:00.000Z');
  ids.otherAda = add(other.orgId, 'ada@example.com', 'Other Ada', '2026-01-03T00:00:00.000Z');
  ids.otherOnly = add(other.orgId, 'carol@example.com', 'Carol', '2026-01-04T00:00:00.000Z');
  await em.flush();
});
afterAll(() => h?.close());

function get(query: string, apiKey = org.apiKey) {
  return h.app.inject({ method: 'GET', url: `/api/customers${query}`, headers: { authorization: `Bearer ${apiKey}` } });
}

test('look-up by email: case-insensitive, trimmed, the organisation\'s own customer only', async () => {
  for (const email of ['ada@example.com', 'ADA@Example.COM', '%20ada@example.com%20']) {
    const res = await get(`?email=${email}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual([{ id: ids.ada, name: 'Ada Buyer', email: 'ada@example.com', createdAt: '2026-01-01T00:00:00.000Z' }]);
  }
  expect((await get('?email=ada@example.com', other.apiKey)).json()).toEqual([
    { id: ids.otherAda, name: 'Other Ada', email: 'ada@example.com', createdAt: '2026-01-03T00:00:00.000Z' },
  ]);
});

test('an email the organisation does not know (another organisation\'s included) is an empty array', async () => {
  expect((await get('?email=nobody@example.com')).json()).toEqual([]);
  expect((await get('?email=carol@example.com')).json()).toEqual([]);
});

test('without email: every customer of the organisation, newest first', async () => {
  const res = await get('');
  expect(res.statusCode).toBe(200);
  expect(res.json().map((c: { id: string }) => c.id)).toEqual([ids.bob, ids.ada]);
  expect((await get('?email=')).json()).toHaveLength(2);
});

test('paging: 100 by default, limit and after', async () => {
  const many = await seedOrganisation(h);
  await h.orm.em.fork().execute(
    `insert into customer (id, organisation_id, email, name, created_at)
     select gen_random_uuid(), ?, 'c' || g || '@example.com', 'C ' || g, timestamptz '2026-01-01' + g * interval '1 minute'
     from generate_series(1, 150) g`,
    [many.orgId],
  );
  const all = (await get('', many.apiKey)).json() as Array<{ id: string; email: string }>;
  expect(all).toHaveLength(100);
  expect(all[0].email).toBe('c150@example.com');
  const page = (await get(`?limit=60&after=${all[99].id}`, many.apiKey)).json() as Array<{ email: string }>;
  expect(page.map((c) => c.email)).toEqual(Array.from({ length: 50 }, (_, i) => `c${50 - i}@example.com`));
  expect((await get('?limit=1000', many.apiKey)).json()).toHaveLength(150);
});

test.each([
  ['limit=0', 400],
  ['limit=1001', 400],
  ['limit=ten', 400],
  ['email=a&email=b', 400],
  ['after=nope', 404],
  ['after=00000000-0000-4000-8000-000000000000', 404],
])('?%s → %i {error}', async (query, status) => {
  const res = await get(`?${query}`);
  expect(res.statusCode).toBe(status);
  expect(res.json()).toEqual({ error: expect.any(String) });
});

test('after naming another organisation\'s customer is 404', async () => {
  const res = await get(`?after=${ids.otherOnly}`);
  expect(res.statusCode).toBe(404);
  expect(res.json()).toEqual({ error: expect.any(String) });
});
