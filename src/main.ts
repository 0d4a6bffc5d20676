/**
 * `npm start`: the whole service in one process tree — API, worker, and whatever embedded default
 * a variable does not replace (PostgreSQL, the Temporal dev server, the dev mailbox).
 */
import { loadConfig } from './config';
import { startDevMailbox } from './dev/dev-mailbox';
import { startEmbeddedPostgres } from './dev/embedded-postgres';
import { startTemporalDevServer } from './dev/temporal-dev-server';
import { connectCore, runStarter, startApi, startWorker } from './roles';
import { installTracing, uninstallTracing } from './telemetry/tracing';
import { addressWithoutPassword } from './telemetry/logging';

async function main(): Promise<void> {
  const started = Date.now();
  const config = loadConfig();
  await runStarter(config.logLevel, async ({ log, stops }) => {
    if ((await installTracing(config.tracing)).enabled) stops.push(uninstallTracing);
    const postgres = config.databaseUrl ? undefined : await startEmbeddedPostgres(config, log);
    if (postgres) stops.push(() => postgres.stop());
    const temporalServer = config.temporal.address ? undefined : await startTemporalDevServer(config, log);
    if (temporalServer) stops.push(() => temporalServer.stop());
    const mailbox = config.smtpUrl ? undefined : await startDevMailbox(log);
    if (mailbox) stops.push(() => mailbox.stop());

    const endpoints = {
      databaseUrl: config.databaseUrl ?? postgres!.url,
      temporalAddress: config.temporal.address ?? temporalServer!.address,
      smtpUrl: config.smtpUrl ?? mailbox!.url,
    };
    const core = await connectCore(config, endpoints);
    stops.push(() => core.close());
    if (core.applied.length) log.info(`applied migrations: ${core.applied.join(', ')}`);
    const worker = await startWorker(core, endpoints);
    stops.push(() => worker.close());
    const api = await startApi(core, { temporalUiUrl: temporalServer?.uiUrl, devMailbox: mailbox });
    stops.push(() => api.close());

    return [
      `Delivery service ready in ${((Date.now() - started) / 1000).toFixed(1)} s`,
      `  API          ${config.baseUrl}/api  (listening on ${api.url})`,
      `  API docs     ${config.baseUrl}/docs`,
      `  Dashboard    ${config.baseUrl}/`,
      `  Customers    ${config.siteUrl}/my`,
      `  Temporal UI  ${temporalServer ? temporalServer.uiUrl : `(external cluster at ${config.temporal.address})`}`,
      `  Traces       ${config.tracing.otlpEndpoint ? `OTLP to ${config.tracing.otlpEndpoint} as "${config.tracing.serviceName}"` : 'off (set OTEL_EXPORTER_OTLP_ENDPOINT)'}`,
      `  Metrics      ${config.baseUrl}/metrics (API), ${config.workerMetricsAddress ? `http://${config.workerMetricsAddress}/metrics (worker)` : 'worker: off'}`,
      `  Mailbox      ${mailbox ? `${config.baseUrl}/settings/mailbox (SMTP ${mailbox.url})` : `(external SMTP ${addressWithoutPassword(config.smtpUrl!)})`}`,
      `  Database     ${postgres ? `embedded PostgreSQL under ${config.dataDir}` : 'external (DATABASE_URL)'}`,
      'Create an organisation: npm run cli -- org create --name "My Shop" --owner-email you@example.com --owner-password "a long password"',
      'Ctrl-C stops everything.',
    ];
  });
}

void main();
