import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import type { Logger } from './dev/logger';
import type { Client } from '@temporalio/client';
import type { Config } from './config';
import { createOrm, migrate, SERVICE_POOL, type Orm } from './db/orm';
import { loadKeyRing, type KeyRing } from './security/key-ring';
import type { AppOptions } from './http/app';
import { listenShared } from './http/listen';
import { createMailer } from './mail/mailer';
import { connectTemporal, WorkflowStarter } from './temporal/client';
import { ensureSearchAttributes } from './temporal/register-search-attributes';

/** What both roles share: the database and the Temporal client. */
export interface CoreServices {
  config: Readonly<Config>;
  orm: Orm;
  temporal: Client;
  starter: WorkflowStarter;
  /** SECRETS_KEY: encrypts Temporal payloads (and integration secrets). */
  keyRing: KeyRing;
  /** The database's URL: the API's dispatcher listens there for places freed in the engine. */
  databaseUrl: string;
  /** Registers the service's search attributes on the namespace when missing. */
  prepareTemporal(): Promise<void>;
  close(): Promise<void>;
}

export interface Endpoints {
  databaseUrl: string;
  temporalAddress: string;
}

/**
 * Connects to PostgreSQL and applies pending migrations (transactional, so concurrent starters are
 * safe). The Temporal client connects on first use: an API process starts and records deliveries
 * while Temporal is out of reach, and its dispatcher registers missing search attributes before
 * its first start.
 */
export async function connectCore(config: Readonly<Config>, endpoints: Endpoints): Promise<CoreServices & { applied: string[] }> {
  const orm = await createOrm(endpoints.databaseUrl, { pool: { ...SERVICE_POOL, max: config.databasePoolMax } });
  try {
    const applied = await migrate(orm);
    const keyRing = await loadKeyRing(config);
    const { connection, client: temporal } = connectTemporal(endpoints.temporalAddress, config.temporal.namespace, keyRing);
    return {
      config, orm, temporal, applied, keyRing,
      starter: new WorkflowStarter(temporal, config),
      databaseUrl: endpoints.databaseUrl,
      // Bounded like a dispatch, so a process stopping while Temporal is down is not held by it.
      prepareTemporal: async () => {
        await connection.withDeadline(Date.now() + 5_000, () => ensureSearchAttributes(connection, config.temporal.namespace));
      },
      async close() {
        await connection.close();
        await orm.close(true);
      },
    };
  } catch (error) {
    await orm.close(true);
    throw error;
  }
}

export interface RunningApi {
  app: FastifyInstance;
  url: string;
  close(): Promise<void>;
}

export type ApiAppOptions = Omit<AppOptions, 'dispatcher'> & {
  /** Runs once before the first workflow dispatch, retried until it succeeds (search attributes). */
  prepareTemporal?: () => Promise<void>;
  /**
   * The database on which the dispatcher hears, from any worker process, that a run's place in the
   * engine is free, and looks at once (temporal/engine-places). Without it, it finds out at its poll.
   */
  databaseUrl?: string;
};

/**
 * The API role's app: the HTTP app, and beside it, from `ready` to `close`, the outbox dispatcher
 * that starts the workflows its routes record (DISPATCH_LOOPS=0: none) and the housekeeping that
 * deletes spent rows. Never listens (tests use it as it is).
 */
export async function buildApiApp(options: ApiAppOptions): Promise<FastifyInstance> {
  const [{ buildApp }, { WorkflowDispatcher }, { FreedPlacesListener }, { Housekeeping }, { SESSION_TTL_MS }] = await Promise.all([
    import('./http/app'), import('./temporal/dispatcher'), import('./temporal/engine-places'), import('./services/housekeeping'),
    import('./http/plugins/session'),
  ]);
  const { prepareTemporal, databaseUrl, ...appOptions } = options;
  // The routes tell the dispatcher what they recorded; it logs through the app's logger, so it is made
  // once the app is (and nothing is recorded before `ready`).
  let recorded = (_orgId: string | null): void => undefined;
  const app = await buildApp({ ...appOptions, dispatcher: { recorded: (orgId) => recorded(orgId) } });
  const dispatcher = new WorkflowDispatcher({
    orm: options.orm,
    starter: options.starter,
    ...options.config.dispatch,
    prepare: prepareTemporal,
    log: app.log,
  });
  const housekeeping = new Housekeeping({
    orm: options.orm, clock: options.clock, intervalMs: options.config.housekeepingIntervalMs,
    eventRetentionMs: options.config.outbound.eventRetentionMs,
    sessions: { idleMs: options.config.sessionIdleTimeoutMs, maxAgeMs: SESSION_TTL_MS }, log: app.log,
  });
  recorded = (orgId) => dispatcher.recorded(orgId);
  // DISPATCH_LOOPS=0 (an API process that dispatches nothing) has no loop to wake: no connection for it.
  const freedPlaces = databaseUrl && options.config.dispatch.loops > 0
    ? new FreedPlacesListener({ databaseUrl, onFreed: () => dispatcher.nudge(), log: app.log }) : undefined;
  app.addHook('onReady', async () => {
    dispatcher.start();
    freedPlaces?.start();
    housekeeping.start();
  });
  app.addHook('onClose', async () => {
    await freedPlaces?.close();
    await housekeeping.stop();
    await dispatcher.stop();
  });
  return app;
}

/**
 * Connections the kernel may hold for the API before it accepts them (capped by the system's
 * net.core.somaxconn). Past the queue the kernel drops a new connection's SYN and the client waits
 * for its retransmission, 1 s then 3 s, whichever organisation it comes from; a platform's retries
 * after a refusal reconnect together. Node's default is 511.
 */
const LISTEN_BACKLOG = 4096;

/**
 * The API role: builds the app (with its dispatcher and housekeeping) and listens on HOST:PORT.
 * Each role loads only its own code (the HTTP app here, the Temporal worker below): in the other
 * role's process it would be about 20-27 MB of heap for nothing.
 */
export async function startApi(core: CoreServices, extra: Pick<AppOptions, 'temporalUiUrl' | 'devMailbox'> = {}): Promise<RunningApi> {
  const { openFileStorage } = await import('./storage/open-file-storage');
  const app = await buildApiApp({
    config: core.config,
    orm: core.orm,
    starter: core.starter,
    prepareTemporal: core.prepareTemporal,
    databaseUrl: core.databaseUrl,
    storage: await openFileStorage(core.config),
    clock: () => new Date(),
    ...extra,
  });
  const { url, closeExtra } = await listenShared(app, { port: core.config.port, host: core.config.host, backlog: LISTEN_BACKLOG });
  return {
    app,
    url,
    async close() {
      closeExtra();
      await app.close();
    },
  };
}

export interface RunningWorker {
  /** Resolves when the worker has stopped. */
  done: Promise<void>;
  /** Stops polling and lets running activities finish (shutdownGraceTime). */
  close(): Promise<void>;
}

/** The worker role: runs the workflows and activities on the task queue. */
export async function startWorker(core: CoreServices, endpoints: Endpoints & { smtpUrl: string }): Promise<RunningWorker> {
  const { createWorker } = await import('./temporal/worker');
  const mailer = createMailer(endpoints.smtpUrl, core.config.mailFrom);
  const { worker, connection } = await createWorker({
    deps: { orm: core.orm, mailer, config: core.config },
    address: endpoints.temporalAddress,
    namespace: core.config.temporal.namespace,
    taskQueue: core.config.temporal.taskQueue,
    maxCachedWorkflows: core.config.workerMaxCachedWorkflows,
    keyRing: core.keyRing,
    acceptPlaintextPayloads: core.config.temporal.acceptPlaintextPayloads,
    metricsAddress: core.config.workerMetricsAddress,
  });
  const done = worker.run().finally(async () => {
    mailer.close();
    await connection.close();
  });
  return {
    done,
    async close() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await done;
    },
  };
}

/**
 * Runs a process that starts others (`npm start`, `npm run start:cluster`): `start` gets a logger at
 * LOG_LEVEL (at least info: the ready lines matter) and a list of stops, run in reverse order on
 * SIGINT or SIGTERM; it returns the lines that say what runs where, printed on stdout. When it
 * fails, what it started is stopped and the process exits 1.
 */
export async function runStarter(
  logLevel: Config['logLevel'],
  start: (life: { log: Logger; stops: Array<() => Promise<void>> }) => Promise<string[]>,
): Promise<void> {
  const logger = pino({ level: logLevel === 'silent' ? 'info' : logLevel });
  const log = { info: (m: string) => logger.info(m), warn: (m: string) => logger.warn(m), error: (m: string) => logger.error(m) };
  const stops: Array<() => Promise<void>> = [];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch((e: unknown) => log.error(String(e)));
  };
  onShutdownSignal(stopAll, log.info);
  try {
    const lines = await start({ log, stops });
    process.stdout.write(`${lines.join('\n')}\n`);
  } catch (error) {
    log.error(`start failed: ${(error as Error).stack ?? String(error)}`);
    await stopAll();
    process.exit(1);
  }
}

/** Runs `stop` once on the first SIGINT or SIGTERM; a second signal exits at once. */
export function onShutdownSignal(stop: () => Promise<void>, log: (msg: string) => void): void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) {
      log(`${signal} again: exiting now`);
      process.exit(1);
    }
    stopping = true;
    log(`${signal}: shutting down`);
    stop().then(
      () => process.exit(0),
      (error: unknown) => {
        // Whatever the log level: the exit status alone does not say what failed.
        process.stderr.write(`shutdown failed: ${(error as Error).stack ?? String(error)}\n`);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', handler);
  process.once('SIGTERM', handler);
}

/** For the production roles: a variable they cannot start without. */
export function required(name: string, value: string | undefined): string {
  if (!value) {
    process.stderr.write(`${name} is not set: the production roles start nothing embedded (use npm start for that).\n`);
    process.exit(2);
  }
  return value;
}
