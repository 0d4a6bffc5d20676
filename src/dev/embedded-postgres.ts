import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { runInThisContext } from 'node:vm';
import type { Config } from '../config';
import type { Logger } from './logger';
import { freePort, preferredPort, isPortFree } from './ports';
import { isProcessAlive, processCommandLine, readJsonFile, sleep, terminatePid, writeJsonFile } from './processes';

export interface EmbeddedPostgres {
  /** `postgres://postgres:<password>@127.0.0.1:<port>/delivery` */
  url: string;
  port: number;
  /**
   * True when another live process of this service already runs the cluster of this data dir (e.g. the
   * CLI while `npm start` runs): we use it and stop() leaves it running.
   */
  shared: boolean;
  stop(): Promise<void>;
}

export const EMBEDDED_DATABASE = 'delivery';
/** First choice of port: next to a system PostgreSQL's 5432, so both can run. */
export const DEFAULT_EMBEDDED_POSTGRES_PORT = 5433;
const SUPERUSER = 'postgres';
/**
 * SIGINT = "fast" shutdown: the postmaster ends its backends, then exits. SIGQUIT = "immediate", if that
 * hangs. Never SIGKILL the postmaster: its backends would live on, holding the data dir.
 */
const POSTMASTER_STOP_SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGQUIT'];

/** Kept in `${dataDir}/postgres.json`, beside (not inside) the cluster, which the postgres user owns. */
interface PostgresState {
  port: number;
  password: string;
  /** The node process that runs the cluster; a dead owner means the cluster was left orphaned. */
  ownerPid?: number;
}

// Just the parts of embedded-postgres (and its pg client) used here: the package ships no CommonJS.
interface PgClient {
  connect(): Promise<void>;
  query(sql: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
  end(): Promise<void>;
  escapeIdentifier(name: string): string;
}
interface EmbeddedPostgresInstance {
  initialise(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
  getPgClient(database?: string, host?: string): PgClient;
}
interface EmbeddedPostgresOptions {
  databaseDir: string;
  port: number;
  user: string;
  password: string;
  authMethod: 'scram-sha-256' | 'password' | 'md5';
  persistent: boolean;
  initdbFlags: string[];
  postgresFlags: string[];
  createPostgresUser: boolean;
  onLog: (message: string) => void;
  onError: (messageOrError: unknown) => void;
}
type EmbeddedPostgresClass = new (options: Partial<EmbeddedPostgresOptions>) => EmbeddedPostgresInstance;

/**
 * Node's own require. embedded-postgres is an ES module: Node ≥ 20.19 can require() it, but jest's
 * module system cannot (and can't `import()` without --experimental-vm-modules), so we go around jest.
 * Under jest a module's `process` is a copy whose getBuiltinModule jest routes through its own module
 * system (jest 30); the main context's `process` hands out the real `module` built-in.
 */
function nativeRequire(from: string = __filename): NodeJS.Require {
  const mainProcess = runInThisContext('process') as NodeJS.Process;
  return mainProcess.getBuiltinModule('node:module').createRequire(from);
}

/** require() as embedded-postgres's own files have it: its dependencies and platform package resolve from there. */
function requireBesideEmbeddedPostgres(): NodeJS.Require {
  return nativeRequire(nativeRequire().resolve('embedded-postgres'));
}

let loaded: EmbeddedPostgresClass | undefined;

function loadEmbeddedPostgres(): EmbeddedPostgresClass {
  if (loaded) return loaded;
  loaded = (nativeRequire()('embedded-postgres') as { default: EmbeddedPostgresClass }).default;
  // On import, embedded-postgres hooks SIGINT/SIGTERM/SIGHUP/beforeExit/exit (via async-exit-hook) to stop
  // its clusters and then call process.exit(): that would cut short the worker's graceful shutdown, and
  // its 'exit' hook throws ("done is not a function"). The process that starts a cluster owns shutdown
  // and calls stop(); startEmbeddedPostgres adds its own synchronous 'exit' safety net instead.
  try {
    const exitHook = requireBesideEmbeddedPostgres()('async-exit-hook') as {
      unhookEvent(event: string): void;
      hookedEvents(): string[];
    };
    for (const event of exitHook.hookedEvents()) exitHook.unhookEvent(event);
  } catch {
    // Not fatal: the library's own handlers stay in place.
  }
  return loaded;
}

/** The postmaster's pid and port while a cluster runs in `pgDir` (postmaster.pid lines 1 and 4). */
function runningPostmaster(pgDir: string): { pid: number; port: number } | undefined {
  try {
    const lines = readFileSync(path.join(pgDir, 'postmaster.pid'), 'utf8').split('\n');
    const pid = Number(lines[0]);
    const port = Number(lines[3]);
    if (!isProcessAlive(pid)) return undefined;
    // A stale file whose pid now belongs to another program (after a reboot) is not a running cluster.
    const commandLine = processCommandLine(pid);
    return commandLine && !commandLine.includes(pgDir) ? undefined : { pid, port };
  } catch {
    return undefined;
  }
}

function postgresUserIds(): { uid: number; gid: number } | undefined {
  try {
    const uid = Number(execFileSync('id', ['-u', SUPERUSER], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', SUPERUSER], { encoding: 'utf8' }).trim());
    return { uid, gid };
  } catch {
    return undefined;
  }
}

/**
 * As root, postgres runs as the `postgres` system user, which must be able to walk down to its data
 * folder and to the binaries in node_modules. Grant search (x, not read) permission to others on the
 * ancestors that deny it, e.g. /root (0700) or a mkdtemp folder.
 */
async function ensureTraversable(dir: string, ids: { uid: number; gid: number }, log: Logger): Promise<void> {
  for (let current = path.resolve(dir); ; current = path.dirname(current)) {
    const st = await fs.stat(current);
    const canSearch =
      (st.uid === ids.uid && st.mode & 0o100) || (st.gid === ids.gid && st.mode & 0o010) || st.mode & 0o001;
    if (!canSearch) {
      await fs.chmod(current, (st.mode & 0o7777) | 0o001);
      log.warn(`embedded PostgreSQL: gave others search permission (o+x) on ${current} so the postgres user can reach its files`);
    }
    if (path.dirname(current) === current) break;
  }
}

async function chownRecursive(target: string, uid: number, gid: number): Promise<void> {
  await fs.chown(target, uid, gid);
  const st = await fs.lstat(target);
  if (!st.isDirectory()) return;
  for (const entry of await fs.readdir(target)) await chownRecursive(path.join(target, entry), uid, gid);
}

/** Runs `create database` unless it exists; `postgres` is the maintenance database every cluster has. */
async function ensureDatabase(client: PgClient, name: string): Promise<boolean> {
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rows.length > 0) return false;
    await client.query(`create database ${client.escapeIdentifier(name)}`);
    return true;
  } finally {
    await client.end();
  }
}

/**
 * Starts (or joins) the embedded PostgreSQL cluster of `${dataDir}/postgres`: initdb on first use,
 * same port and password on every later start (kept in `${dataDir}/postgres.json`), database
 * `delivery` created if missing. Listens on 127.0.0.1 only, no unix socket.
 */
export async function startEmbeddedPostgres(
  config: Pick<Config, 'dataDir'>,
  log: Logger,
): Promise<EmbeddedPostgres> {
  const dataDir = path.resolve(config.dataDir);
  const pgDir = path.join(dataDir, 'postgres');
  const statePath = path.join(dataDir, 'postgres.json');
  await fs.mkdir(dataDir, { recursive: true });

  const saved = await readJsonFile<PostgresState>(statePath);
  const state: PostgresState = saved ?? {
    port: await preferredPort(DEFAULT_EMBEDDED_POSTGRES_PORT),
    password: randomBytes(18).toString('base64url'),
  };
  const urlFor = (port: number) =>
    `postgres://${SUPERUSER}:${encodeURIComponent(state.password)}@127.0.0.1:${port}/${EMBEDDED_DATABASE}`;

  const EmbeddedPostgresClass = loadEmbeddedPostgres();
  const isRoot = process.getuid?.() === 0;
  const recentOutput: string[] = [];
  /**
   * The server was asked to stop (by our stop(), or by the terminal's Ctrl-C, which reaches its
   * process group too): it ends its sessions, which it reports as FATAL.
   */
  let stopping = false;
  const routine = (line: string) => /database system is shutting down/.test(line)
    || (stopping && /terminating connection due to administrator command/.test(line));
  const remember = (message: string) => {
    for (const line of message.split('\n')) {
      if (!line.trim()) continue;
      if (/received (smart|fast|immediate) shutdown request/.test(line)) stopping = true;
      recentOutput.push(line);
      if (recentOutput.length > 60) recentOutput.shift();
      // Routine server chatter stays out of the service log; failures of the server itself do not.
      if (/\b(FATAL|PANIC):/.test(line) && !routine(line)) log.error(`postgres: ${line}`);
    }
  };
  const makeInstance = (port: number) =>
    new EmbeddedPostgresClass({
      databaseDir: pgDir,
      port,
      user: SUPERUSER,
      password: state.password,
      authMethod: 'scram-sha-256',
      persistent: true,
      // UTF8 with the C locale: the same cluster on every machine, whatever LANG says.
      initdbFlags: ['--encoding=UTF8', '--locale=C'],
      // TCP on loopback only; no unix socket, whose default directory may not exist or be writable.
      postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
      createPostgresUser: isRoot,
      onLog: remember,
      onError: (err) => remember(String(err)),
    });

  // Already running for this data dir: another process of ours (join it) or a leftover of a process
  // that died without stopping it (adopt it, so that our stop() ends it).
  const running = runningPostmaster(pgDir);
  if (running) {
    const ownerAlive = state.ownerPid !== undefined && isProcessAlive(state.ownerPid);
    // The owner may still be starting it ("the database system is starting up"): retry for a while.
    for (let attempt = 1; ; attempt++) {
      try {
        await ensureDatabase(makeInstance(running.port).getPgClient('postgres', '127.0.0.1'), EMBEDDED_DATABASE);
        break;
      } catch (err) {
        if (attempt >= 30) throw new Error(`embedded PostgreSQL: the cluster running in ${pgDir} does not answer: ${(err as Error).message}`);
        await sleep(500);
      }
    }
    if (ownerAlive) {
      log.info(`embedded PostgreSQL: using the cluster of ${pgDir} run by pid ${state.ownerPid} on port ${running.port}`);
      return { url: urlFor(running.port), port: running.port, shared: true, stop: async () => undefined };
    }
    log.warn(`embedded PostgreSQL: adopting the cluster left running in ${pgDir} (pid ${running.pid}, port ${running.port})`);
    await writeJsonFile(statePath, { ...state, port: running.port, ownerPid: process.pid });
    let stopped = false;
    const onExit = () => {
      try {
        process.kill(running.pid, 'SIGINT');
      } catch {
        // already gone
      }
    };
    process.once('exit', onExit);
    return {
      url: urlFor(running.port),
      port: running.port,
      shared: false,
      async stop() {
        if (stopped) return;
        stopped = true;
        process.removeListener('exit', onExit);
        await terminatePid(running.pid, POSTMASTER_STOP_SIGNALS, 30_000);
        await writeJsonFile(statePath, { ...state, port: running.port, ownerPid: undefined });
      },
    };
  }

  // Keep the recorded port unless something else has taken it meanwhile.
  if (!(await isPortFree(state.port))) {
    const port = await preferredPort(DEFAULT_EMBEDDED_POSTGRES_PORT);
    log.warn(`embedded PostgreSQL: port ${state.port} is taken; using ${port}`);
    state.port = port;
  }

  const initialised = existsSync(path.join(pgDir, 'PG_VERSION'));
  if (!initialised && existsSync(pgDir)) {
    // A folder without PG_VERSION is an initdb that died half-way; initdb refuses a non-empty folder.
    log.warn(`embedded PostgreSQL: ${pgDir} holds no complete cluster; initialising it again`);
    await fs.rm(pgDir, { recursive: true, force: true });
  }

  let instance = makeInstance(state.port);
  if (isRoot) {
    // Before initdb runs as the postgres user, it must be able to reach the data dir and the binaries.
    // If the user does not exist yet (initialise() creates it), only "others" rights can apply to it.
    const before = postgresUserIds() ?? { uid: -1, gid: -1 };
    await ensureTraversable(dataDir, before, log);
    const binaries = binaryDir();
    if (binaries) await ensureTraversable(binaries, before, log);
    // initialise() creates the postgres user if missing (createPostgresUser) and chowns pgDir to it.
    if (!initialised) await instance.initialise().catch((err) => fail('initdb failed', err));
    const ids = postgresUserIds();
    if (!ids) {
      throw new Error(
        'embedded PostgreSQL: running as root needs a "postgres" system user, which could not be found or created (groupadd/useradd).',
      );
    }
    // A cluster restored or copied by root must belong to the postgres user again.
    if ((await fs.stat(pgDir)).uid !== ids.uid) {
      log.warn(`embedded PostgreSQL: giving ${pgDir} back to the postgres user`);
      await chownRecursive(pgDir, ids.uid, ids.gid);
    }
  } else if (!initialised) {
    await instance.initialise().catch((err) => fail('initdb failed', err));
  }
  if (!initialised) log.info(`embedded PostgreSQL: initialised a new cluster in ${pgDir}`);

  const startServer = async () => {
    await writeJsonFile(statePath, { ...state, ownerPid: process.pid });
    await instance.start();
  };
  await startServer().catch(async (err) => {
    // The port was free when checked, but another program bound it before the server did (two
    // starts at once on one machine): once more, on a port the system gives now.
    if (!recentOutput.some((line) => /Address already in use/.test(line))) fail(`could not start on port ${state.port}`, err);
    const taken = state.port;
    state.port = await freePort();
    log.warn(`embedded PostgreSQL: port ${taken} was taken as it started; using ${state.port}`);
    instance = makeInstance(state.port);
    await startServer().catch((again) => fail(`could not start on port ${state.port}`, again));
  });
  const postmasterPid = runningPostmaster(pgDir)?.pid;
  // If this process exits without stop() (an uncaught error, process.exit), end postgres with it:
  // a signal is all that can be sent from an 'exit' listener.
  const onExit = () => {
    if (postmasterPid === undefined) return;
    try {
      process.kill(postmasterPid, 'SIGINT');
    } catch {
      // already gone
    }
  };
  process.once('exit', onExit);
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    process.removeListener('exit', onExit);
    // Not instance.stop(): it waits for an 'exit' event that never comes if postgres already died.
    if (postmasterPid !== undefined) await terminatePid(postmasterPid, POSTMASTER_STOP_SIGNALS, 30_000);
    else await instance.stop();
    await writeJsonFile(statePath, { ...state, ownerPid: undefined });
  };
  try {
    if (await ensureDatabase(instance.getPgClient('postgres', '127.0.0.1'), EMBEDDED_DATABASE)) {
      log.info(`embedded PostgreSQL: created database ${EMBEDDED_DATABASE}`);
    }
  } catch (err) {
    await stop();
    throw err;
  }
  log.info(`embedded PostgreSQL on 127.0.0.1:${state.port} (data in ${pgDir})`);
  return { url: urlFor(state.port), port: state.port, shared: false, stop };

  function fail(what: string, err: unknown): never {
    const detail = err instanceof Error ? err.message : '';
    throw new Error(`embedded PostgreSQL: ${what}. ${detail}\n${recentOutput.slice(-20).join('\n')}`.trim());
  }
}

/** The folder of the platform's postgres binaries (@embedded-postgres/<platform>-<arch>/native). */
function binaryDir(): string | undefined {
  try {
    const entry = requireBesideEmbeddedPostgres().resolve(`@embedded-postgres/${process.platform}-${process.arch}`);
    return path.join(path.dirname(entry), '..', 'native', 'bin');
  } catch {
    return undefined;
  }
}
