import { BULK_DISPATCH_KINDS } from '../../src/domain/dispatch';
import { startHarness, type Harness } from '../helpers/harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ worker: false });
});
afterAll(() => h?.close());

test('the migrations build exactly the schema the entities describe', async () => {
  const diff = await h.orm.getSchemaGenerator().getUpdateSchemaSQL({ wrap: false });
  expect(diff.trim()).toBe('');
});

test('the outbox claim\'s index has exactly the bulk kinds the claim orders by (else every claim reads and sorts the whole outbox)', async () => {
  const [index] = await h.orm.em.fork().execute<Array<{ def: string }>>(`select pg_get_indexdef('workflow_dispatch_claim_index'::regclass) as def`);
  const indexed = [...index.def.matchAll(/'([a-z-]+)'::text/g)].map((m) => m[1]);
  expect(indexed.sort()).toEqual([...BULK_DISPATCH_KINDS].sort());
});
