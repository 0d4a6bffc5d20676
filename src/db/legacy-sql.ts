import type { EntityManager, Knex } from '@mikro-orm/postgresql';

/**
 * The SQL helpers of the modules not yet moved to the typed statements of `./sql`; this file goes
 * when the last of them has moved. SQL shared by the read queries written in raw SQL. The ORM's connection hands timestamps over as
 * PostgreSQL text in the session's time zone, so read models format them in SQL.
 */

/** A timestamptz column as ISO 8601 in UTC with milliseconds ("2026-11-25T22:09:51.123Z"); null stays null. */
export function isoUtc(column: string): string {
  return `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

interface PreparedStatement {
  name: string;
  /** The text with `$1`, `$2`, ... in place of each `?`, for the driver itself. */
  positional: string;
}

/** Statements by SQL text: one per fixed text in the code, so the map stays small. */
const statements = new Map<string, PreparedStatement>();

function statementOf(sql: string): PreparedStatement {
  let statement = statements.get(sql);
  if (statement === undefined) {
    if (/\\\?|\?\?/.test(sql)) throw new TypeError('preparedRows: a `?` is a parameter, never an escaped or doubled operator');
    let parameter = 0;
    statement = { name: `read_${statements.size + 1}`, positional: sql.replace(/\?/g, () => `$${(parameter += 1)}`) };
    statements.set(sql, statement);
  }
  return statement;
}

/** The driver's own connection (node-postgres) as the knex pool lends it. */
interface PooledConnection {
  query(config: { name: string; text: string; values: readonly Knex.Value[] }): Promise<{ rows: unknown[] }>;
}

/**
 * Runs a read that a hot path (authentication, the lists integrations poll) sends on every request
 * as a named prepared statement: PostgreSQL parses and plans it once per connection instead of on
 * every call. `em.execute` writes the parameters into the SQL text, so each of its calls is a new
 * statement to parse and plan: that was about half of PostgreSQL's work for a GET /api/products
 * (authentication included). `sql` is a fixed text with `?` for each parameter (never values
 * written into it); a parameter is one value (an array is not spread into a list: send JSON).
 *
 * Inside the EntityManager's transaction it runs on that transaction's connection, through knex.
 * Otherwise it goes straight to a connection of the pool: knex's query builder and runner around
 * one ready statement were a tenth of the API's CPU on GET /api/products.
 */
export async function preparedRows<Row>(em: EntityManager, sql: string, params: readonly Knex.Value[]): Promise<Row[]> {
  if (params.some(Array.isArray)) throw new TypeError('preparedRows: an array parameter is sent as JSON, not spread');
  const statement = statementOf(sql);
  const knex = em.getKnex();
  const transaction = em.getTransactionContext<Knex.Transaction>();
  if (transaction) {
    const result: { rows: Row[] } = await knex.raw(sql, params as Knex.Value[]).options({ name: statement.name }).transacting(transaction);
    return result.rows;
  }
  const connection = (await knex.client.acquireConnection()) as PooledConnection;
  try {
    return (await connection.query({ name: statement.name, text: statement.positional, values: params })).rows as Row[];
  } finally {
    knex.client.releaseConnection(connection);
  }
}

