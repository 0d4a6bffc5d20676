import type { EntityManager, Knex } from '@mikro-orm/postgresql';

/**
 * SQL shared by the read queries written in raw SQL. The ORM's connection hands timestamps over as
 * PostgreSQL text in the session's time zone, so read models format them in SQL.
 */

/** A timestamptz column as ISO 8601 in UTC with milliseconds ("2026-11-25T22:09:51.123Z"); null stays null. */
export function isoUtc(column: string): string {
  return `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/** Statement names by SQL text: one per fixed text in the code, so the map stays small. */
const statementNames = new Map<string, string>();

/**
 * Runs a read that a hot path (authentication, the lists integrations poll) sends on every request
 * as a named prepared statement: PostgreSQL parses and plans it once per connection instead of on
 * every call. `em.execute` writes the parameters into the SQL text, so each of its calls is a new
 * statement to parse and plan: that was about half of PostgreSQL's work for a GET /api/products
 * (authentication included). `sql` is a fixed text with `?` for each parameter (never values written into it).
 * Runs in the EntityManager's transaction, if it has one.
 */
export async function preparedRows<Row>(em: EntityManager, sql: string, params: readonly Knex.Value[]): Promise<Row[]> {
  let name = statementNames.get(sql);
  if (name === undefined) {
    name = `read_${statementNames.size + 1}`;
    statementNames.set(sql, name);
  }
  const query = em.getKnex().raw(sql, params).options({ name });
  const transaction = em.getTransactionContext<Knex.Transaction>();
  const result: { rows: Row[] } = await (transaction ? query.transacting(transaction) : query);
  return result.rows;
}

/** A LIKE pattern for "contains": `%` and `_` typed by a person are literal characters, not wildcards. */
export const likeContains = (text: string): string => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
