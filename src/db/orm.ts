import path from 'node:path';
import { MikroORM, type Options } from '@mikro-orm/postgresql';
import { ENTITIES } from './entities';

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
    // The list of migrations is given by `migrate`, which alone loads them.
    migrations: {
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
  // Loaded here, not with every ORM: the migrator (umzug and a command-line framework) and every
  // migration are a few hundred milliseconds of loading, which each test file paid again. Listed
  // explicitly, so the same list works from TypeScript (tests) and from the build.
  const [{ Migrator }, { MIGRATIONS }] = await Promise.all([import('@mikro-orm/migrations'), import('../../migrations')]);
  orm.config.set('migrations', { ...orm.config.get('migrations'), migrationsList: MIGRATIONS });
  Migrator.register(orm);
  const applied = await orm.getMigrator().up();
  return applied.map((m) => m.name);
}
