import { randomBytes } from 'node:crypto';
import { Client as PgClient } from 'pg';

function adminUrl(): string {
  const url = process.env.TEST_ADMIN_DATABASE_URL;
  if (!url) throw new Error('TEST_ADMIN_DATABASE_URL is not set: run the tests through jest (global setup starts PostgreSQL)');
  return url;
}

async function withAdmin<T>(work: (client: PgClient) => Promise<T>): Promise<T> {
  const client = new PgClient({ connectionString: adminUrl() });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** A fresh, empty database on the test server; `drop()` removes it. */
export async function createTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `delivery_test_${randomBytes(6).toString('hex')}`;
  await withAdmin((c) => c.query(`create database ${name}`));
  const url = new URL(adminUrl());
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => withAdmin((c) => c.query(`drop database if exists ${name} with (force)`)).then(() => undefined),
  };
}
