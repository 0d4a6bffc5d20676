/**
 * `npm run start:cluster`: the production shape on this machine. The real Temporal server on
 * PostgreSQL (DATABASE_URL, or the embedded one), CLUSTER_API_PROCESSES API processes and
 * CLUSTER_WORKER_PROCESSES worker processes, each its own Node process on its own port, the dev
 * mailbox when SMTP_URL is unset. A line per URL; Ctrl-C stops all of it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { loadConfig } from '../config';
import { createOrm, migrate } from '../db/orm';
import { runStarter } from '../roles';
import { ensureSearchAttributes } from '../temporal/register-search-attributes';
import { startDevMailbox } from './dev-mailbox';
import { startEmbeddedPostgres } from './embedded-postgres';
import { freePort } from './ports';
import { terminatePid } from './processes';
import {
  findTemporalServer, findTemporalUi, freeFrontendPort, prepareTemporalDatabases, startTemporalServer, startTemporalUi, temporalDatabasesOf,
} from './temporal-cluster';

const DIST = path.resolve(__dirname, '..');

/** Resolves once `child` printed a line matching `ready`; rejects if it exits first. */
function whenReady(child: ChildProcess, ready: RegExp, name: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const onData = (chunk: Buffer) => {
      seen = (seen + chunk.toString('utf8')).slice(-20_000);
      if (ready.test(seen)) resolve();
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${name} exited (${code}) before it was ready:\n${seen.slice(-3000)}`)));
  });
}

async function main(): Promise<void> {
  const started = Date.now();
  const config = loadConfig();
  await runStarter(config.logLevel, async ({ log, stops }) => {
    const binaries = findTemporalServer();
    if (!binaries) throw new Error('no Temporal server binary: run `npm run setup:temporal -- --server` once (builds it with Go, about 4 minutes)');
    const postgres = config.databaseUrl ? undefined : await startEmbeddedPostgres(config, log);
    if (postgres) stops.push(() => postgres.stop());
    const databaseUrl = config.databaseUrl ?? postgres!.url;
    const databases = temporalDatabasesOf(databaseUrl);
    await prepareTemporalDatabases(databaseUrl, binaries.sql, databases);
    // Once, before the processes start (as compose's migrate service does): on a fresh database,
    // two processes creating the same tables at once would fail one of them.
    const orm = await createOrm(databaseUrl);
    const applied = await migrate(orm).finally(() => orm.close(true));
    if (applied.length) log.info(`applied migrations: ${applied.join(', ')}`);

    const server = await startTemporalServer({
      serverBinary: binaries.server,
      root: path.join(config.dataDir, 'temporal-cluster'),
      databaseUrl,
      ports: { frontend: await freeFrontendPort(), metrics: await freePort() },
      shards: config.cluster.historyShards,
      namespace: config.temporal.namespace,
      databases,
    }, log);
    stops.push(() => server.stop());
    const connection = await Connection.connect({ address: server.address });
    await ensureSearchAttributes(connection, config.temporal.namespace);
    await connection.close();

    const mailbox = config.smtpUrl ? undefined : await startDevMailbox(log);
    if (mailbox) stops.push(() => mailbox.stop());

    const children: Array<{ name: string; child: ChildProcess; url: string }> = [];
    stops.push(async () => {
      await Promise.all(children.map(({ child }) => (child.pid !== undefined && child.exitCode === null
        ? terminatePid(child.pid, ['SIGTERM', 'SIGKILL'], 60_000) : undefined)));
    });
    const common = {
      ...process.env,
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: server.address,
      SMTP_URL: config.smtpUrl ?? mailbox!.url,
      DATA_DIR: config.dataDir,
    };
    const launch = (name: string, script: string, env: NodeJS.ProcessEnv, ready: RegExp, url: string) => {
      const child = spawn(process.execPath, [path.join(DIST, script)], { env: { ...common, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
      children.push({ name, child, url });
      return whenReady(child, ready, name);
    };
    const apiPorts = await Promise.all(Array.from({ length: config.cluster.apiProcesses }, () => freePort()));
    const uiBinary = findTemporalUi();
    const uiPort = await freePort();
    const uiUrl = uiBinary ? `http://localhost:${uiPort}` : undefined;
    const waits: Array<Promise<void>> = [];
    apiPorts.forEach((port, i) => {
      const env = { PORT: String(port), BASE_URL: `http://localhost:${port}`, ...(uiUrl ? { TEMPORAL_UI_URL: uiUrl } : {}) };
      waits.push(launch(`api ${i + 1}`, 'http/server.js', env, /API listening/, `http://localhost:${port}`));
    });
    for (let i = 0; i < config.cluster.workerProcesses; i += 1) {
      const metrics = `127.0.0.1:${await freePort()}`;
      waits.push(launch(`worker ${i + 1}`, 'temporal/worker-main.js', { WORKER_METRICS_ADDRESS: metrics }, /worker polling/, `http://${metrics}/metrics`));
    }
    await Promise.all(waits);
    const ui = uiBinary && await startTemporalUi({
      uiBinary, root: path.join(config.dataDir, 'temporal-ui'), serverAddress: server.address, port: uiPort,
      codecEndpoint: `http://localhost:${apiPorts[0]}/codec`, apiOrigins: apiPorts.map((port) => `http://localhost:${port}`),
    });
    if (ui) stops.push(() => ui.stop());

    return [
      `Cluster ready in ${((Date.now() - started) / 1000).toFixed(1)} s`,
      `  Temporal     ${server.address} (server on PostgreSQL, ${config.cluster.historyShards} history shards; metrics ${server.metricsUrl})`,
      `  Temporal UI  ${ui ? `${ui.url} (decodes payloads through http://localhost:${apiPorts[0]}/codec for a signed-in operator)` : '(not built: npm run setup:temporal -- --server)'}`,
      ...children.map(({ name, url }) => `  ${name.padEnd(12)} ${url}${name.startsWith('api') ? ' (API, dashboard, /metrics)' : ' (metrics)'}`),
      `  Mailbox      ${mailbox ? `SMTP ${mailbox.url}` : `(external SMTP ${config.smtpUrl})`}`,
      `  Database     ${postgres ? `embedded PostgreSQL under ${config.dataDir}` : 'external (DATABASE_URL)'}`,
      'Ctrl-C stops everything.',
    ];
  });
}

void main();
