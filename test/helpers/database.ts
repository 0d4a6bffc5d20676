import { randomBytes } from 'node:crypto';
import { Client as PgClient } from 'pg';
import { SERVICE_POOL } from '../../src/db/orm';

/**
 * PostgreSQL connections of each pool a test makes (the harness's, and each service process a test
 * starts: DATABASE_POOL_MAX): three test files at once, the cluster tier's four processes and
 * engine among them, stay within the server's default 100.
 */
export const TEST_DATABASE_POOL_MAX = '10';

/**
 * The pool of an ORM a test makes for itself: the service's, with a longer wait for a
 * connection. Its one second stands for overload in production, but on the test machine a browser,
 * an engine and child processes share the two cores, and a new connection can take longer (the
 * cluster test's reads failed so once, with the engine catching up after its stop).
 */
export const TEST_POOL = { ...SERVICE_POOL, max: Number(TEST_DATABASE_POOL_MAX), acquireTimeoutMillis: 10_000 };

/** The PostgreSQL server the tests and benchmarks make their databases on: DATABASE_URL, else the machine's. */
export function hostPostgresUrl(): string {
  return process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
}

function adminUrl(): string {
  const url = process.env.TEST_ADMIN_DATABASE_URL;
  if (!url) throw new Error('TEST_ADMIN_DATABASE_URL is not set: run the tests through jest (global setup starts PostgreSQL)');
  return url;
}

async function withAdmin<T>(admin: string, work: (client: PgClient) => Promise<T>): Promise<T> {
  const client = new PgClient({ connectionString: admin });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * A fresh database with the service's schema on the test server, copied from the template global
 * setup migrated (or an empty one on the server of `admin`, a superuser's URL: migrate it);
 * `drop()` removes it.
 */
export async function createTestDatabase(admin = adminUrl()): Promise<{ name: string; url: string; migrated: boolean; drop(): Promise<void> }> {
  const name = `delivery_test_${randomBytes(6).toString('hex')}`;
  const template = admin === process.env.TEST_ADMIN_DATABASE_URL ? process.env.TEST_TEMPLATE_DATABASE : undefined;
  await withAdmin(admin, (c) => c.query(`create database ${name}${template ? ` template ${template}` : ''}`));
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    migrated: template !== undefined,
    drop: () => withAdmin(admin, (c) => c.query(`drop database if exists ${name} with (force)`)).then(() => undefined),
  };
}
