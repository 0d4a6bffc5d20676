import { TestWorkflowEnvironment } from '@temporalio/testing';
import { loadConfig } from '../../src/config';
import { freePort } from '../../src/dev/ports';
import { findTemporalCli } from '../../src/dev/temporal-cli';
import { DEV_SERVER_ARGS } from '../../src/dev/temporal-dev-server';

/**
 * The real Temporal dev server a test run (jest's global setup) or a benchmark shares: the CLI
 * binary (TEMPORAL_CLI_PATH, PATH or the setup cache) with the service's own dev-server arguments.
 */
export async function startSharedTemporal(): Promise<TestWorkflowEnvironment> {
  const cli = findTemporalCli(loadConfig({ TEMPORAL_CLI_PATH: process.env.TEMPORAL_CLI_PATH }));
  return TestWorkflowEnvironment.createLocal({
    server: {
      ...(cli ? { executable: { type: 'existing-path', path: cli } } : {}),
      // Not the SDK's pick (port 0's, which an outgoing connection may take before the server binds it).
      port: await freePort(),
      extraArgs: [...DEV_SERVER_ARGS],
    },
  });
}
