/**
 * The real Temporal server (go.temporal.io/server v1.29.1, built by `npm run setup:temporal --
 * --server`) on PostgreSQL: the production shape's engine, run here by `npm run start:cluster`.
 * Creates its two databases on the given PostgreSQL, applies the schemas with the server's SQL tool
 * (embedded in the binary), writes a config (history shards, archival off), starts the server from
 * its own folder (the dynamic-config path is relative to it) and registers the namespace.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { Client as PgClient } from 'pg';
import { binaryCacheRoot, isExecutableFile } from './binary-cache';
import { freePortBlock } from './ports';
import { spawnWatched, stopChild, type WatchedChild } from './child-processes';
import { sleep } from './processes';
import type { Logger } from './logger';

/** The server's two databases: its history and its visibility store. */
export interface TemporalDatabases {
  history: string;
  visibility: string;
}

/** The engine's databases beside the service's own (`delivery` → `delivery_temporal`, …): one cluster per service database. */
export function temporalDatabasesOf(databaseUrl: string): TemporalDatabases {
  const name = decodeURIComponent(new URL(databaseUrl).pathname.slice(1)) || 'delivery';
  return { history: `${name}_temporal`, visibility: `${name}_temporal_visibility` };
}

/** Where `npm run setup:temporal -- --server` puts `server` and `sql` (keep in step with the script). */
export function temporalServerCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(binaryCacheRoot(env), 'temporal-server');
}

export function findTemporalServer(env: NodeJS.ProcessEnv = process.env): { server: string; sql: string } | undefined {
  const dir = temporalServerCacheDir(env);
  const found = { server: path.join(dir, 'server'), sql: path.join(dir, 'sql') };
  return isExecutableFile(found.server) && isExecutableFile(found.sql) ? found : undefined;
}

interface PgTarget {
  host: string;
  port: number;
  user: string;
  password: string;
}

function pgTargetOf(databaseUrl: string): PgTarget {
  const url = new URL(databaseUrl);
  return { host: url.hostname, port: Number(url.port || 5432), user: decodeURIComponent(url.username), password: decodeURIComponent(url.password) };
}

/**
 * The service's database (DATABASE_URL's) and the engine's two exist, the engine's with their
 * schemas at the binary's version (idempotent). Made through the server's `postgres` database, so
 * DATABASE_URL may name one that does not exist yet.
 */
export async function prepareTemporalDatabases(databaseUrl: string, sqlTool: string, names: TemporalDatabases): Promise<void> {
  const pg = pgTargetOf(databaseUrl);
  const admin = new PgClient({ connectionString: withDatabase(databaseUrl, 'postgres') });
  await admin.connect();
  try {
    for (const name of [decodeURIComponent(new URL(databaseUrl).pathname.slice(1)), ...Object.values(names)]) {
      const exists = await admin.query('select 1 from pg_database where datname = $1', [name]);
      if (exists.rowCount === 0) await admin.query(`create database "${name}"`);
    }
  } finally {
    await admin.end();
  }
  for (const [kind, name] of Object.entries(names)) {
    const base = ['--plugin', 'postgres12', '--ep', pg.host, '-p', String(pg.port), '-u', pg.user, ...(pg.password ? ['--pw', pg.password] : []), '--db', name];
    const db = new PgClient({ connectionString: withDatabase(databaseUrl, name) });
    await db.connect();
    const versioned = await db.query(`select 1 from information_schema.tables where table_name = 'schema_version'`).finally(() => db.end());
    if (versioned.rowCount === 0) run(sqlTool, [...base, 'setup-schema', '-v', '0.0']);
    run(sqlTool, [...base, 'update-schema', '--schema-name', `postgresql/v12/${kind === 'history' ? 'temporal' : 'visibility'}`]);
  }
}

function withDatabase(databaseUrl: string, name: string): string {
  const url = new URL(databaseUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

function run(command: string, args: string[]): void {
  const result = spawnSync(command, args, { encoding: 'utf8', timeout: 120_000 });
  if (result.status !== 0) {
    throw new Error(`${path.basename(command)} ${args.filter((a) => !a.startsWith('--pw')).slice(-3).join(' ')} failed: ${(result.stderr || result.stdout || '').trim().slice(-2000)}`);
  }
}

export interface ClusterPorts {
  /** The frontend's gRPC port (clients and workers); the other services take the next ones. */
  frontend: number;
  metrics: number;
}

/** The offsets from the frontend port of the ports the config takes: the services' gRPC and HTTP ports and their membership ports. */
const PORT_OFFSETS = [0, 1, 2, 6, 10].flatMap((offset) => [offset, 100 + offset]);

/**
 * A frontend port whose whole block is free, 7233 first. Below 32768: the server keeps membership
 * ports in a smallint column.
 */
export function freeFrontendPort(): Promise<number> {
  return freePortBlock(PORT_OFFSETS, { from: 7233, below: 32_768, step: 1_000 });
}

/**
 * Connections to the engine's main store, per service (frontend, history, matching and worker each
 * hold a pool). The module's 20 would let the engine alone take 80 of PostgreSQL's default 100,
 * which the service's own pools share (the cluster tier saw 81 in use); 10 is more than two cores use.
 */
const ENGINE_STORE_CONNECTIONS = 10;

/** The server's config for this machine: the module's development-postgres12.yaml, adapted. */
export function serverConfigYaml(databaseUrl: string, ports: ClusterPorts, shards: number, names: TemporalDatabases): string {
  const pg = pgTargetOf(databaseUrl);
  const store = (database: string, conns: number) => `      sql:
        pluginName: "postgres12"
        databaseName: "${database}"
        connectAddr: "${pg.host}:${pg.port}"
        connectProtocol: "tcp"
        user: ${JSON.stringify(pg.user)}
        password: ${JSON.stringify(pg.password)}
        maxConns: ${conns}
        maxIdleConns: ${conns}
        maxConnLifetime: "1h"`;
  const service = (offset: number) => `    rpc:
      grpcPort: ${ports.frontend + offset}
      membershipPort: ${ports.frontend + 100 + offset}
      bindOnLocalHost: true`;
  return `log:
  stdout: true
  level: warn

persistence:
  defaultStore: postgres-default
  visibilityStore: postgres-visibility
  numHistoryShards: ${shards}
  datastores:
    postgres-default:
${store(names.history, ENGINE_STORE_CONNECTIONS)}
    postgres-visibility:
${store(names.visibility, 4)}

global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: "127.0.0.1"
  metrics:
    prometheus:
      framework: "tally"
      timerType: "histogram"
      listenAddress: "127.0.0.1:${ports.metrics}"

services:
  frontend:
${service(0)}
      httpPort: ${ports.frontend + 10}
  history:
${service(1)}
  matching:
${service(2)}
  worker:
${service(6)}

clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: "active"
  currentClusterName: "active"
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: "frontend"
      rpcAddress: "127.0.0.1:${ports.frontend}"

dcRedirectionPolicy:
  policy: "noop"

archival:
  history:
    state: "disabled"
  visibility:
    state: "disabled"

namespaceDefaults:
  archival:
    history:
      state: "disabled"
    visibility:
      state: "disabled"

dynamicConfigClient:
  filepath: "config/dynamicconfig/delivery.yaml"
  pollInterval: "10s"
`;
}

/**
 * Search attributes registered at run time are seen by starts at once; ids up to 255 bytes; Task
 * Queue Priority and Fairness on (runs carry their organisation as fairness key). As compose sets it.
 */
const DYNAMIC_CONFIG = `system.forceSearchAttributesCacheRefreshOnRead:
  - value: true
    constraints: {}
limit.maxIDLength:
  - value: 255
    constraints: {}
matching.useNewMatcher:
  - value: true
    constraints: {}
matching.enableFairness:
  - value: true
    constraints: {}
`;

export interface RunningTemporalServer {
  address: string;
  metricsUrl: string;
  stop(): Promise<void>;
}

/**
 * Starts the server from `root` (config written there) and waits until its frontend answers and
 * `namespace` exists (registered when missing, 3 days' retention).
 */
export async function startTemporalServer(
  options: { serverBinary: string; root: string; databaseUrl: string; ports: ClusterPorts; shards: number; namespace: string; databases: TemporalDatabases },
  log: Logger,
): Promise<RunningTemporalServer> {
  await mkdir(path.join(options.root, 'config', 'dynamicconfig'), { recursive: true });
  await writeFile(path.join(options.root, 'config', 'development.yaml'), serverConfigYaml(options.databaseUrl, options.ports, options.shards, options.databases));
  await writeFile(path.join(options.root, 'config', 'dynamicconfig', 'delivery.yaml'), DYNAMIC_CONFIG);
  const server = spawnWatched(options.serverBinary, ['--root', options.root, '--config', 'config', '--env', 'development', '--allow-no-auth', 'start'], {
    cwd: options.root, env: process.env,
  });
  const address = `127.0.0.1:${options.ports.frontend}`;
  const stop = () => stopChild(server.child);
  try {
    await untilNamespace(address, options.namespace, server);
  } catch (error) {
    await stop();
    throw error;
  }
  log.info(`Temporal server at ${address} on PostgreSQL (${options.shards} history shards), metrics http://127.0.0.1:${options.ports.metrics}/metrics`);
  return { address, metricsUrl: `http://127.0.0.1:${options.ports.metrics}/metrics`, stop };
}

/**
 * Waits until the server at `address` answers for `namespace`, registering it when missing (3
 * days' retention); throws with the server's output if it exits or 2 minutes pass.
 */
export async function untilNamespace(address: string, namespace: string, server: WatchedChild): Promise<void> {
  const recent = () => server.output().slice(-3000);
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (server.child.exitCode !== null) throw new Error(`the Temporal server exited (${server.child.exitCode}):\n${recent()}`);
    try {
      const connection = await Connection.connect({ address, connectTimeout: 2_000 });
      try {
        try {
          await connection.workflowService.describeNamespace({ namespace });
          return;
        } catch (error) {
          // Registered now, the namespace reaches every service's cache within seconds: ask again.
          if ((error as { code?: number }).code === 5) {
            await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('3 days') })
              .catch((e: unknown) => { if ((e as { code?: number }).code !== 6) throw e; });
          }
          throw error;
        }
      } finally {
        await connection.close();
      }
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`the Temporal server did not answer within 2 minutes: ${(error as Error).message}\n${recent()}`);
      await sleep(1_000);
    }
  }
}

/** The Temporal Web UI server (github.com/temporalio/ui-server v2.42.1, built beside the server). */
export function findTemporalUi(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const binary = path.join(binaryCacheRoot(env), 'temporal-ui', 'server');
  return isExecutableFile(binary) ? binary : undefined;
}

export interface RunningTemporalUi {
  url: string;
  stop(): Promise<void>;
}

/**
 * The Web UI for the server at `serverAddress`, on `port` of loopback, decoding payloads through
 * the API's codec endpoint with the operator's session cookie (the UI and the API are same-site on
 * `localhost`).
 */
export async function startTemporalUi(
  options: { uiBinary: string; root: string; serverAddress: string; port: number; codecEndpoint: string; apiOrigins: string[] },
): Promise<RunningTemporalUi> {
  await mkdir(path.join(options.root, 'config'), { recursive: true });
  await writeFile(path.join(options.root, 'config', 'development.yaml'), `temporalGrpcAddress: ${options.serverAddress}
port: ${options.port}
enableUi: true
defaultNamespace: default
cors:
  allowOrigins: ${JSON.stringify(options.apiOrigins)}
codec:
  endpoint: ${options.codecEndpoint}
  passAccessToken: false
  includeCredentials: true
`);
  const ui = spawnWatched(options.uiBinary, ['--root', options.root, '--config', 'config', '--env', 'development', 'start'], {
    cwd: options.root, env: process.env,
  });
  const url = `http://localhost:${options.port}`;
  const stop = () => stopChild(ui.child, 10_000);
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (ui.child.exitCode !== null) throw new Error(`the Temporal UI exited (${ui.child.exitCode}):\n${ui.output()}`);
    const ok = await fetch(`http://127.0.0.1:${options.port}/api/v1/settings`).then((r) => r.ok, () => false);
    if (ok) return { url, stop };
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`the Temporal UI did not answer within 30 s:\n${ui.output()}`);
    }
    await sleep(500);
  }
}
