import path from 'node:path';
import { MikroORM, type Options } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { ENTITIES } from './entities';
import { MIGRATIONS } from '../../migrations';

export type Orm = MikroORM;

/**
 * The service's connection pool. Waiting over a second for a connection is overload: the caller gets
 * 503 (a webhook within decisions §4's second) or an activity retries, instead of queueing for a minute.
 */
export const SERVICE_POOL = { min: 0, max: 20, acquireTimeoutMillis: 1_000 } as const;

export function ormOptions(databaseUrl: string, overrides: Partial<Options> = {}): Options {
  return {
    clientUrl: databaseUrl,
    entities: ENTITIES,
    extensions: [Migrator],
    // Migrations are listed explicitly so that the same list works from TypeScript (tests) and
    // from the compiled build, with no file-system discovery.
    migrations: {
      migrationsList: MIGRATIONS,
      path: path.join(__dirname, '../../migrations'),
      pathTs: path.join(__dirname, '../../migrations'),
      transactional: true,
      allOrNothing: true,
      // New migrations are diffed against a migrated database, not a snapshot file that every
      // run would rewrite.
      snapshot: false,
      silent: true,
    },
    pool: { ...SERVICE_POOL },
    debug: false,
    allowGlobalContext: false,
    ...overrides,
  };
}

/** Makes an ORM from a URL; callers own it and close it. No singleton. */
export async function createOrm(databaseUrl: string, overrides: Partial<Options> = {}): Promise<Orm> {
  return MikroORM.init(ormOptions(databaseUrl, overrides));
}

/** Applies pending migrations; returns the names applied. */
export async function migrate(orm: Orm): Promise<string[]> {
  const applied = await orm.getMigrator().up();
  return applied.map((m) => m.name);
}
