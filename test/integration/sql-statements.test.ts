import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { createOrm, migrate } from '../../src/db/orm';
import { definedStatements, statement, sql, type Statement } from '../../src/db/sql';
import { createTestDatabase, TEST_POOL } from '../helpers/database';
import { productSources, ROOT } from '../helpers/source-files';

/**
 * Every statement of every owning module, prepared against the migrated schema: PostgreSQL parses
 * and plans it (a renamed column, a wrong type, an undeterminable parameter fail here) and
 * describes its result, whose column names must be exactly the keys its row type declares.
 * Nothing runs, so no statement needs data or values.
 */

/** Every module of the product that defines statements. */
const statementModules = (): string[] =>
  productSources().map((file) => path.join(ROOT, file)).filter((file) => /\bstatement</.test(readFileSync(file, 'utf8')));

/** The protocol's Describe of an unnamed statement: its result's column names, [] when it returns none. */
function describeStatement(client: PgClient, text: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    let columns: string[] = [];
    // A "submittable" is the driver's own extension point (pg-cursor is one): it is sent as the
    // client's active query and gets the messages that answer it.
    const submittable = {
      submit(connection: { parse(m: object, more: boolean): void; describe(m: object, more: boolean): void; sync(): void }) {
        connection.parse({ text, name: '', types: [] }, true);
        connection.describe({ type: 'S', name: '' }, true);
        connection.sync();
      },
      handleRowDescription(message: { fields: Array<{ name: string }> }) { columns = message.fields.map((f) => f.name); },
      // An error ends the driver's active query at once (the Sync already sent brings the
      // connection back to ready); no ReadyForQuery comes to this object after it.
      handleError: reject,
      handleReadyForQuery() { resolve(columns); },
      handleDataRow() {}, handleCommandComplete() {}, handleEmptyQuery() {}, handlePortalSuspended() {},
    };
    client.query(submittable as never);
  });
}

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let client: PgClient;
beforeAll(async () => {
  database = await createTestDatabase();
  const orm = await createOrm(database.url, { pool: TEST_POOL });
  try {
    await migrate(orm);
  } finally {
    await orm.close();
  }
  client = new PgClient({ connectionString: database.url });
  await client.connect();
  for (const module of statementModules()) await import(module);
}, 120_000);
afterAll(async () => {
  await client?.end();
  await database?.drop();
});

test('the owning modules define their statements', () => {
  expect(definedStatements.length).toBeGreaterThan(0);
});

test('every statement prepares against the schema and returns exactly its row type\'s columns', async () => {
  const wrong: string[] = [];
  for (const defined of definedStatements) {
    try {
      const columns = await describeStatement(client, defined.text);
      if ([...columns].sort().join() !== [...defined.columns].sort().join()) {
        wrong.push(`${defined.definedAt}: returns (${columns.join(', ')}), its row type declares (${defined.columns.join(', ')})`);
      }
    } catch (error) {
      wrong.push(`${defined.definedAt}: ${(error as Error).message}`);
    }
  }
  expect(wrong).toEqual([]);
});

describe('the check itself', () => {
  // Defined here, after the modules: they are checked one by one, not in the list above.
  let misdeclared: Statement<{ id: string; gone: string }, { orgId: string }>;
  let misspelt: Statement<{ id: string }, { orgId: string }>;
  beforeAll(() => {
    misdeclared = statement<{ id: string; gone: string }, { orgId: string }>(
      { id: true, gone: true }, (p) => sql`select id from organisation where id = ${p.orgId}`,
    );
    misspelt = statement<{ id: string }, { orgId: string }>(
      { id: true }, (p) => sql`select id from organisation where organisation_idd = ${p.orgId}`,
    );
  });

  test('a row type with a column the statement does not select is caught', async () => {
    expect(await describeStatement(client, misdeclared.text)).toEqual(['id']);
    expect(misdeclared.columns).toEqual(['id', 'gone']);
  });

  test('a column the schema does not have is caught', async () => {
    await expect(describeStatement(client, misspelt.text)).rejects.toThrow(/organisation_idd/);
  });
});
