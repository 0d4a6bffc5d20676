import type { EntityManager, Knex } from '@mikro-orm/postgresql';

/**
 * Typed SQL for the tables' owning modules. A statement is defined once, at module level, as a
 * fixed text with named parameters written where they are used:
 *
 *     const purchaseEmail = statement<{ email: string }, { orgId: string; purchaseId: string }>(
 *       { email: true },
 *       (p) => sql`select c.email from purchase p join customer c on c.id = p.customer_id
 *                  where p.id = ${p.purchaseId} and p.organisation_id = ${p.orgId}`,
 *     );
 *     const [row] = await purchaseEmail.rows(em, { orgId, purchaseId });
 *
 * - The text never holds a value, so each statement is prepared once per connection (PostgreSQL
 *   parses and plans it once) and runs on the driver's own connection, not through knex's builder.
 * - A parameter named twice is one `$n`; a value is sent as is (an array as a PostgreSQL array).
 * - The row type's keys are declared as an object (`{ email: true }`), which the compiler checks
 *   against the type; test/integration/sql-statements.test.ts prepares every statement against the
 *   migrated schema and checks each one's result columns against those keys, so a renamed column
 *   or a forgotten select fails in seconds rather than as `undefined` on a page.
 */

/** A named parameter's place in a text; made only by a statement's parameter object. */
class Parameter {
  constructor(readonly name: string) {}
}

/** A piece of SQL text with its parameters in place; composed with `sql`, run as a `statement`. */
export class Sql {
  constructor(readonly parts: readonly (string | Parameter)[]) {}
}

/** What a fragment builder may be given for a value: a statement's parameter, or SQL naming one (a column). */
export type SqlValue = Sql | Parameter;

/**
 * SQL text. An interpolated `Sql` (a fragment) is inserted as SQL, a statement's parameter as its
 * `$n`. Nothing else may be interpolated: values are always parameters, never text.
 */
export function sql(strings: TemplateStringsArray, ...inserted: Array<Sql | Parameter>): Sql {
  const parts: Array<string | Parameter> = [];
  strings.forEach((text, i) => {
    parts.push(text);
    if (i >= inserted.length) return;
    const piece = inserted[i];
    if (piece instanceof Sql) parts.push(...piece.parts);
    else if (piece instanceof Parameter) parts.push(piece);
    else throw new TypeError('sql: only a fragment (sql`…`) or a statement parameter may be interpolated');
  });
  return new Sql(parts);
}

/** Text that is SQL by construction (a column name, a fragment made by a function here), never input. */
export const trustedSql = (text: string): Sql => new Sql([text]);

/** A timestamptz column as ISO 8601 in UTC with milliseconds ("2026-11-25T22:09:51.123Z"); null stays null. */
export function isoUtc(column: string): Sql {
  return trustedSql(`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`);
}

/** A LIKE pattern for "contains": `%` and `_` typed by a person are literal characters, not wildcards. */
export const likeContains = (text: string): string => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** The row type of a statement that returns no rows. */
export type NoRows = Record<never, never>;

/** Every key of a row type, each `true`: the compiler checks none is missing or extra. */
export type Columns<Row> = { readonly [K in keyof Required<Row>]: true };

/** A statement's parameters, one placeholder per name. */
export type Parameters<Params> = { readonly [K in keyof Params]-?: Parameter };

interface PooledConnection {
  query(config: { name: string; text: string; values: readonly unknown[] }): Promise<{ rows: unknown[]; rowCount: number | null }>;
}

export interface Statement<Row, Params> {
  /** The text as sent, with `$1`, `$2`, …: for the statements test and EXPLAIN. */
  readonly text: string;
  /** The result's column names, as declared (empty for a statement that returns no rows). */
  readonly columns: readonly string[];
  /** Where it was defined ("src/purchases/purchase-store.ts:42"), for the statements test's messages. */
  readonly definedAt: string;
  rows(em: EntityManager, params: Params): Promise<Row[]>;
  /** The first row, or undefined when there is none. */
  first(em: EntityManager, params: Params): Promise<Row | undefined>;
  /** Runs it and answers how many rows it wrote (or read). */
  run(em: EntityManager, params: Params): Promise<number>;
}

/** Every statement defined so far, in definition order (the statements test imports each store). */
export const definedStatements: Array<Statement<unknown, never>> = [];

let nextStatement = 1;

function callerOf(): string {
  const line = new Error().stack?.split('\n')[3] ?? '';
  return line.replace(/^\s*at\s+(?:.*\()?/, '').replace(/\)$/, '').replace(`${process.cwd()}/`, '');
}

/**
 * Defines a statement. `build` is called once, now, with a placeholder per parameter; the text it
 * makes is what every call sends. A statement with no parameters takes `{}`.
 */
export function statement<Row extends object, Params extends object = NoRows>(
  columns: Columns<Row>,
  build: (p: Parameters<Params>) => Sql,
): Statement<Row, Params> {
  const placeholders = new Proxy({}, { get: (_target, name) => new Parameter(String(name)) }) as Parameters<Params>;
  const order: string[] = [];
  const text = build(placeholders).parts.map((part) => {
    if (typeof part === 'string') {
      if (/\?/.test(part.replace(/'[^']*'/g, ''))) throw new TypeError(`statement: a \`?\` outside a string literal in ${part.trim().slice(0, 60)}…: use a named parameter`);
      return part;
    }
    let index = order.indexOf(part.name);
    if (index < 0) index = order.push(part.name) - 1;
    return `$${index + 1}`;
  }).join('');
  const name = `s${nextStatement++}`;

  async function execute(em: EntityManager, params: Params): Promise<{ rows: unknown[]; rowCount: number | null }> {
    const values = order.map((key) => {
      const value = (params as Record<string, unknown>)[key];
      if (value === undefined) throw new TypeError(`statement ${definedAt}: parameter ${key} is undefined (send null for SQL NULL)`);
      return value;
    });
    // Inside the EntityManager's transaction, on that transaction's connection (knex lends it as
    // is); otherwise straight on a connection of the pool: knex's builder and runner around one
    // ready statement were a tenth of the API's CPU on GET /api/products.
    const transaction = em.getTransactionContext<Knex.Transaction>();
    const client = transaction ? transaction.client : em.getKnex().client;
    const connection = (await client.acquireConnection()) as PooledConnection;
    try {
      return await connection.query({ name, text, values });
    } finally {
      client.releaseConnection(connection);
    }
  }

  const definedAt = callerOf();
  const defined: Statement<Row, Params> = {
    text,
    columns: Object.keys(columns),
    definedAt,
    rows: async (em, params) => (await execute(em, params)).rows as Row[],
    first: async (em, params) => (await execute(em, params)).rows[0] as Row | undefined,
    run: async (em, params) => (await execute(em, params)).rowCount ?? 0,
  };
  definedStatements.push(defined as Statement<unknown, never>);
  return defined;
}
