/** The API role for production (npm run start:api): any number of these behind a load balancer. */
import { loadConfig } from '../config';
import { installTracing, uninstallTracing } from '../telemetry/tracing';
import { connectCore, onShutdownSignal, required, startApi } from '../roles';

async function main(): Promise<void> {
  const config = loadConfig();
  const endpoints = {
    databaseUrl: required('DATABASE_URL', config.databaseUrl),
    temporalAddress: required('TEMPORAL_ADDRESS', config.temporal.address),
  };
  await installTracing(config.tracing);
  const core = await connectCore(config, endpoints);
  const api = await startApi(core);
  process.stderr.write(`API listening on ${api.url} (public ${config.baseUrl})\n`);
  onShutdownSignal(async () => {
    await api.close();
    await core.close();
    await uninstallTracing();
  }, (msg) => api.app.log.info(msg));
}

main().catch((error: unknown) => {
  process.stderr.write(`API failed to start: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
