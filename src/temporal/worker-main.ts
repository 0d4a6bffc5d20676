/** The worker role for production (npm run start:worker): any number of these on one task queue. */
import { loadConfig } from '../config';
import { installTracing, uninstallTracing } from '../telemetry/tracing';
import { connectCore, onShutdownSignal, required, startWorker } from '../roles';

async function main(): Promise<void> {
  const config = loadConfig();
  const endpoints = {
    databaseUrl: required('DATABASE_URL', config.databaseUrl),
    temporalAddress: required('TEMPORAL_ADDRESS', config.temporal.address),
    smtpUrl: required('SMTP_URL', config.smtpUrl),
  };
  await installTracing(config.tracing);
  const core = await connectCore(config, endpoints);
  const worker = await startWorker(core, endpoints);
  process.stderr.write(`worker polling task queue "${config.temporal.taskQueue}" on ${endpoints.temporalAddress}\n`);
  onShutdownSignal(async () => {
    await worker.close();
    await core.close();
    await uninstallTracing();
  }, (msg) => process.stderr.write(`${msg}\n`));
  await worker.done;
}

main().catch((error: unknown) => {
  process.stderr.write(`worker failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
