import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, rm } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import type { Config } from '../config';
import { SEARCH_ATTRIBUTES } from '../temporal/search-attributes';
import type { Logger } from './logger';
import { freePort, isPortFree, preferredPort } from './ports';
import { isProcessAlive, processCommandLine, readJsonFile, sleep, terminatePid, writeJsonFile } from './processes';
import { findTemporalCli, temporalCliCacheDir } from './temporal-cli';

export interface TemporalDevServer {
  /** gRPC frontend, `127.0.0.1:<port>`, for TEMPORAL_ADDRESS-style use */
  address: string;
  /** Web UI, `http://127.0.0.1:<uiPort>` */
  uiUrl: string;
  /** True when another live process of this service already ran it for this data dir; stop() leaves it. */
  shared: boolean;
  stop(): Promise<void>;
}

export const DEFAULT_TEMPORAL_PORT = 7233;
const READY_TIMEOUT_MS = 90_000;
const STOP_TIMEOUT_MS = 15_000;

/** `${dataDir}/temporal-dev-server.json`: lets the next start recognise a server left running. */
interface DevServerState {
  pid: number;
  ownerPid: number;
  address: string;
  uiUrl: string;
  dbFile: string;
}

type DevServerConfig = Pick<Config, 'dataDir' | 'baseUrl'> & { temporal: Pick<Config['temporal'], 'namespace' | 'uiPort' | 'cliPath'> };

/**
 * The dev server tuned for throughput (measured in bench/webhooks, see the README):
 * - the CLI turns on a search-attribute cache refresh on every read, which the server's own docs say
 *   never to use in production; every workflow start reads the three custom attributes;
 * - eager activity execution hands a workflow's first activity to the worker that completes the
 *   workflow task, saving a round trip through the matching service;
 * - SQLite in WAL mode lets readers go on while the single writer commits.
 */
/**
 * The service's search attributes, defined when the server starts: registering them afterwards
 * leaves them unknown to starts until the server's cache refreshes (up to a minute with the cache
 * refresh on read turned off below), and a sale in that minute would be refused.
 */
export const DEV_SERVER_SEARCH_ATTRIBUTE_ARGS: readonly string[] = Object.entries(SEARCH_ATTRIBUTES)
  .flatMap(([name, type]) => ['--search-attribute', `${name}=${type}`]);

/**
 * What the cluster and compose set too, so that tests and `npm start` meet the same engine:
 * - workflow ids of at most 255 bytes (`limit.maxIDLength`), which every id of src/domain/ids fits;
 * - Task Queue Priority and Fairness (the new matcher, fairness on): runs carry their organisation
 *   as fairness key, so one organisation's burst of runs fills only its share of the task queue.
 */
export const ENGINE_LIMIT_ARGS: readonly string[] = [
  '--dynamic-config-value', 'limit.maxIDLength=255',
  '--dynamic-config-value', 'matching.useNewMatcher=true',
  '--dynamic-config-value', 'matching.enableFairness=true',
];

export const DEV_SERVER_THROUGHPUT_ARGS: readonly string[] = [
  '--dynamic-config-value', 'system.forceSearchAttributesCacheRefreshOnRead=false',
  '--dynamic-config-value', 'system.enableActivityEagerExecution=true',
  '--sqlite-pragma', 'journal_mode=wal',
  '--sqlite-pragma', 'synchronous=2',
];

/** What every dev server of ours is started with: the throughput settings, the engine's limits and fairness, and the search attributes. */
export const DEV_SERVER_ARGS: readonly string[] = [...DEV_SERVER_THROUGHPUT_ARGS, ...ENGINE_LIMIT_ARGS, ...DEV_SERVER_SEARCH_ATTRIBUTE_ARGS];

/**
 * The `temporal server start-dev` arguments (Temporal CLI v1.5.x syntax); `tuning` replaces the
 * throughput settings (the engine-settings benchmark measures them one by one).
 */
export function devServerArgs(
  opts: { dbFile: string; port: number; uiPort: number; namespace: string; codecEndpoint?: string },
  tuning: readonly string[] = DEV_SERVER_THROUGHPUT_ARGS,
): string[] {
  const args = [
    'server', 'start-dev',
    '--db-filename', opts.dbFile,
    '--ip', '127.0.0.1',
    '--port', String(opts.port),
    '--ui-port', String(opts.uiPort),
    '--namespace', opts.namespace,
    '--log-level', 'warn',
    ...tuning,
    ...ENGINE_LIMIT_ARGS,
    ...DEV_SERVER_SEARCH_ATTRIBUTE_ARGS,
    // Payloads are encrypted (SECRETS_KEY): the UI decodes them through the API's codec endpoint.
    ...(opts.codecEndpoint ? ['--ui-codec-endpoint', opts.codecEndpoint] : []),
  ];
  return args;
}

/**
 * Starts the embedded Temporal dev server with its state in `${dataDir}/temporal.sqlite` and resolves
 * once the frontend serves the namespace and the Web UI answers. Uses the Temporal CLI found by
 * findTemporalCli(); without one it tries the SDK's own download (needs internet), else throws an
 * Error that says what to install.
 */
export async function startTemporalDevServer(config: DevServerConfig, log: Logger): Promise<TemporalDevServer> {
  const dataDir = path.resolve(config.dataDir);
  await mkdir(dataDir, { recursive: true });
  const dbFile = path.join(dataDir, 'temporal.sqlite');
  const statePath = path.join(dataDir, 'temporal-dev-server.json');
  const namespace = config.temporal.namespace;

  // A server for this data dir may still run: SQLite takes one server only, so join it if its owner
  // is alive, or end it if it was orphaned by a process that died without stopping it.
  const previous = await readJsonFile<DevServerState>(statePath);
  if (previous && isProcessAlive(previous.pid) && processCommandLine(previous.pid).includes(dbFile)) {
    if (previous.ownerPid !== process.pid && isProcessAlive(previous.ownerPid)) {
      await waitUntilReady(previous.address, previous.uiUrl, namespace, () => undefined);
      log.info(`Temporal dev server: using the one run by pid ${previous.ownerPid} at ${previous.address}`);
      return { address: previous.address, uiUrl: previous.uiUrl, shared: true, stop: async () => undefined };
    }
    log.warn(`Temporal dev server: stopping pid ${previous.pid}, left running by a process that has died`);
    await terminatePid(previous.pid, ['SIGTERM', 'SIGKILL'], STOP_TIMEOUT_MS);
  }

  // TEMPORAL_UI_PORT=0 means any free port (tests); a fixed one that is taken is the operator's call.
  const uiPort = config.temporal.uiPort === 0 ? await freePort() : config.temporal.uiPort;
  if (!(await isPortFree(uiPort))) {
    throw new Error(`Temporal dev server: port ${uiPort} for the Web UI is in use; free it or set TEMPORAL_UI_PORT`);
  }
  let port = await preferredPort(DEFAULT_TEMPORAL_PORT);
  while (port === uiPort) port = await freePort(); // both were free a moment ago; keep them apart

  const cli = findTemporalCli(config);
  if (config.temporal.cliPath && cli !== path.resolve(config.temporal.cliPath)) {
    log.warn(`TEMPORAL_CLI_PATH=${config.temporal.cliPath} is not an executable file; ignoring it`);
  }
  if (!cli) return startWithSdkDownload({ dbFile, port, uiPort, namespace }, log);

  const address = `127.0.0.1:${port}`;
  // Named like the API when it is on loopback: the UI's calls to the codec endpoint are then
  // same-site and carry the operator's session cookie.
  const uiUrl = `http://${new URL(config.baseUrl).hostname === 'localhost' ? 'localhost' : '127.0.0.1'}:${uiPort}`;
  // detached: false keeps the server in our process group, so a terminal's Ctrl-C reaches it too.
  const child = spawn(cli, devServerArgs({ dbFile, port, uiPort, namespace, codecEndpoint: `${config.baseUrl}/codec` }), {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: false,
  });
  const output: string[] = [];
  const remember = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (!line.trim()) continue;
      output.push(line);
      if (output.length > 60) output.shift();
    }
  };
  child.stdout?.on('data', remember);
  child.stderr?.on('data', remember);
  let exited = false;
  const exitedPromise = new Promise<void>((resolve) => {
    child.once('exit', () => {
      exited = true;
      resolve();
    });
    child.once('error', (err) => {
      output.push(String(err));
      exited = true;
      resolve();
    });
  });
  // An 'exit' listener can still send a signal: the server must not outlive us (SIGKILL of this
  // process is covered by the state file check above, on the next start).
  const onExit = () => child.kill('SIGTERM');
  process.once('exit', onExit);

  if (child.pid !== undefined) {
    await writeJsonFile(statePath, { pid: child.pid, ownerPid: process.pid, address, uiUrl, dbFile } satisfies DevServerState);
  }

  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    process.removeListener('exit', onExit);
    await stopChild(child, () => exited, exitedPromise);
    await rm(statePath, { force: true });
  };

  try {
    await waitUntilReady(address, uiUrl, namespace, () => {
      if (exited) throw new Error(`it exited during start-up (code ${child.exitCode})`);
    });
  } catch (err) {
    await stop();
    throw new Error(
      `Temporal dev server (${cli}) did not start: ${(err as Error).message}\n${output.slice(-20).join('\n')}`.trim(),
    );
  }
  log.info(`Temporal dev server at ${address} (namespace ${namespace}), Web UI ${uiUrl}, state in ${dbFile}`);
  return { address, uiUrl, shared: false, stop };
}

async function stopChild(child: ChildProcess, hasExited: () => boolean, exited: Promise<void>): Promise<void> {
  if (hasExited()) return;
  child.kill('SIGTERM');
  const timer = sleep(STOP_TIMEOUT_MS).then(() => 'timeout' as const);
  if ((await Promise.race([exited.then(() => 'exited' as const), timer])) === 'timeout') {
    child.kill('SIGKILL');
    await exited;
  }
}

/**
 * Ready = the frontend serves the namespace (it is created at launch, a moment after the port opens)
 * and the Web UI answers HTTP. `check` throws to give up early, e.g. when the process has exited.
 */
async function waitUntilReady(address: string, uiUrl: string, namespace: string, check: () => void): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let lastError: unknown;
  let frontendReady = false;
  while (Date.now() < deadline) {
    check();
    try {
      if (!frontendReady) {
        const connection = await Connection.connect({ address, connectTimeout: 2_000 });
        try {
          await connection.workflowService.describeNamespace({ namespace });
        } finally {
          await connection.close();
        }
        frontendReady = true;
      }
      const status = await httpStatus(uiUrl);
      if (status === 200) return;
      lastError = new Error(`Web UI answered HTTP ${status}`);
    } catch (err) {
      lastError = err;
    }
    await sleep(250);
  }
  throw new Error(`not ready after ${READY_TIMEOUT_MS / 1000} s: ${(lastError as Error | undefined)?.message ?? 'no answer'}`);
}

/** node:http rather than fetch(), which refuses some ports outright (e.g. 22, 6000) as "bad ports". */
function httpStatus(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { timeout: 2_000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy(new Error('Web UI did not answer within 2 s')));
    req.on('error', reject);
  });
}

export const MISSING_TEMPORAL_CLI_MESSAGE =
  'No Temporal CLI found for the embedded Temporal dev server. Run `npm run setup:temporal` (builds it ' +
  'into the cache; Go is needed to build it), or install the Temporal CLI ' +
  '(https://temporal.io/setup/install-temporal-cli) and put `temporal` on PATH or set TEMPORAL_CLI_PATH ' +
  'to the binary, or set TEMPORAL_ADDRESS to use an existing Temporal cluster.';

/**
 * No CLI on this machine: let the Temporal SDK download one (it caches it; needs internet, and
 * @temporalio/testing, a dev dependency). Offline, or in a production install, this throws the
 * message above.
 */
async function startWithSdkDownload(
  opts: { dbFile: string; port: number; uiPort: number; namespace: string },
  log: Logger,
): Promise<TemporalDevServer> {
  log.warn('Temporal dev server: no Temporal CLI found; asking the Temporal SDK to download one (needs internet)');
  try {
    const { TestWorkflowEnvironment } = await import('@temporalio/testing');
    const env = await TestWorkflowEnvironment.createLocal({
      server: {
        executable: { type: 'cached-download', downloadDir: temporalCliCacheDir() },
        dbFilename: opts.dbFile,
        ip: '127.0.0.1',
        port: opts.port,
        ui: true,
        uiPort: opts.uiPort,
        namespace: opts.namespace,
        log: { format: 'pretty', level: 'warn' },
        extraArgs: [
          ...DEV_SERVER_ARGS,
        ],
      },
    });
    const uiUrl = `http://127.0.0.1:${opts.uiPort}`;
    log.info(`Temporal dev server (SDK download) at ${env.address}, Web UI ${uiUrl}`);
    let stopped = false;
    return {
      address: env.address,
      uiUrl,
      shared: false,
      async stop() {
        if (stopped) return;
        stopped = true;
        await env.teardown();
      },
    };
  } catch (err) {
    throw new Error(`${MISSING_TEMPORAL_CLI_MESSAGE} (The SDK download failed: ${(err as Error).message})`);
  }
}
