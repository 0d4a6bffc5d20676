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
