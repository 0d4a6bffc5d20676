/**
 * `npm run start:cluster`: the production shape on this machine. The real Temporal server on
 * PostgreSQL (DATABASE_URL, or the embedded one), CLUSTER_API_PROCESSES API processes and
 * CLUSTER_WORKER_PROCESSES worker processes, each its own Node process on its own port, the dev
 * mailbox when SMTP_URL is unset, and SeaweedFS for the product files when more than one API
 * process runs and STORAGE_URL is unset. A line per URL; Ctrl-C stops all of it.
 */
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { loadConfig } from '../config';
import { createOrm, migrate } from '../db/orm';
import { runStarter } from '../roles';
import { ensureSearchAttributes } from '../temporal/register-search-attributes';
import { API_NODE_FLAGS } from '../http/api-process';
import { WORKER_NODE_FLAGS } from '../temporal/worker-process';
import { clusterEnvironments } from './cluster-env';
import { startDevMailbox } from './dev-mailbox';
import { startEmbeddedPostgres } from './embedded-postgres';
import { startSeaweedFs } from './seaweedfs';
import { freePort } from './ports';
import { spawnWatched, stopChild, waitForOutput, type WatchedChild } from './child-processes';
import { addressWithoutPassword } from '../telemetry/logging';
import {
  findTemporalServer, findTemporalUi, freeFrontendPort, prepareTemporalDatabases, startTemporalServer, startTemporalUi, temporalDatabasesOf,
} from './temporal-cluster';

const DIST = path.resolve(__dirname, '..');

/** The bucket of the cluster's own SeaweedFS. */
const CLUSTER_BUCKET = 'delivery-files';

/** How long a dead API or worker process stays down before it is started again. */
const RESTART_DELAY_MS = 1_000;

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

    // More than one API process needs the files where each of them can read them: object storage
    // (STORAGE_URL), else a SeaweedFS of the cluster's own under DATA_DIR.
    const s3 = !config.objectStorage && config.cluster.apiProcesses > 1
      ? await startSeaweedFs({ root: path.join(config.dataDir, 'seaweedfs'), log })
      : undefined;
    if (s3) {
      stops.push(() => s3.stop());
      await s3.createBucket(CLUSTER_BUCKET);
    }
    const storageEnv = s3 ? {
      STORAGE_URL: `s3://${CLUSTER_BUCKET}/files`, S3_ENDPOINT: s3.settings.endpoint, S3_REGION: s3.settings.region,
      S3_ACCESS_KEY_ID: s3.settings.accessKeyId, S3_SECRET_ACCESS_KEY: s3.settings.secretAccessKey,
    } : {};
    const filesLine = s3
      ? `s3://${CLUSTER_BUCKET}/files on SeaweedFS ${s3.settings.endpoint} (data under ${path.join(config.dataDir, 'seaweedfs')})`
      : config.objectStorage ? config.objectStorage.url : `local disk ${config.fileStorageDir} (one API process)`;

    // Supervised like an orchestrator would: an API or worker process that dies is started again
    // (after RESTART_DELAY_MS), on the same port, until Ctrl-C.
    let stopping = false;
    const children: Array<{ name: string; watched: WatchedChild; url: string }> = [];
    stops.push(async () => {
      stopping = true;
      await Promise.all(children.map((c) => stopChild(c.watched.child, 60_000)));
    });
    const common = {
      ...process.env,
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: server.address,
      SMTP_URL: config.smtpUrl ?? mailbox!.url,
      DATA_DIR: config.dataDir,
      ...storageEnv,
    };
    const launch = (name: string, script: string, env: NodeJS.ProcessEnv, ready: RegExp, url: string, nodeFlags: readonly string[] = []) => {
      const entry = { name, url, watched: undefined as unknown as WatchedChild };
      children.push(entry);
      const spawnOnce = () => {
        entry.watched = spawnWatched(process.execPath, [...nodeFlags, path.join(DIST, script)], { cwd: process.cwd(), env: { ...common, ...env } });
        entry.watched.child.once('exit', (code, signal) => {
          if (stopping) return;
          log.warn(`${name} exited (${signal ?? `code ${code}`}); starting it again in ${RESTART_DELAY_MS / 1000} s`);
          setTimeout(() => {
            if (stopping) return;
            spawnOnce();
            waitForOutput(entry.watched, ready, 120_000).then(() => log.info(`${name} is back`), (error: Error) => log.error(`${name}: ${error.message}`));
          }, RESTART_DELAY_MS).unref();
        });
      };
      spawnOnce();
      return waitForOutput(entry.watched, ready, 120_000).catch((error: Error) => {
        throw new Error(`${name}: ${error.message}`);
      });
    };
    const apiPorts = await Promise.all(Array.from({ length: config.cluster.apiProcesses }, () => freePort()));
    const workerMetricsAddresses: string[] = [];
    for (let i = 0; i < config.cluster.workerProcesses; i += 1) workerMetricsAddresses.push(`127.0.0.1:${await freePort()}`);
    const uiBinary = findTemporalUi();
    const uiPort = await freePort();
    const uiUrl = uiBinary ? `http://localhost:${uiPort}` : undefined;
    const envs = clusterEnvironments({ siteUrl: process.env.SITE_URL, apiPorts, workerMetricsAddresses, temporalUiUrl: uiUrl });
    const waits: Array<Promise<void>> = [];
    envs.apis.forEach((env, i) => {
      waits.push(launch(`api ${i + 1}`, 'http/server.js', env, /API listening/, env.BASE_URL, API_NODE_FLAGS));
    });
    envs.workers.forEach((env, i) => {
      waits.push(launch(`worker ${i + 1}`, 'temporal/worker-main.js', env, /worker polling/, `http://${env.WORKER_METRICS_ADDRESS}/metrics`, WORKER_NODE_FLAGS));
    });
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
      `  Links        ${envs.siteUrl}/d/… (SITE_URL of every API and worker process)`,
      ...children.map(({ name, url }) => `  ${name.padEnd(12)} ${url}${name.startsWith('api') ? ' (API, dashboard, /metrics)' : ' (metrics)'}`),
      `  Files        ${filesLine}`,
      `  Mailbox      ${mailbox ? `SMTP ${mailbox.url}` : `(external SMTP ${addressWithoutPassword(config.smtpUrl!)})`}`,
      `  Database     ${postgres ? `embedded PostgreSQL under ${config.dataDir}` : 'external (DATABASE_URL)'}`,
      'Ctrl-C stops everything.',
    ];
  });
}

void main();
