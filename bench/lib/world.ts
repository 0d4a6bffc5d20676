import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { writeWorkflowBundle } from '../../src/temporal/workflow-bundle';
import { hostPostgresUrl } from '../../test/helpers/database';
import { startHarness, type Harness, type HarnessOptions } from '../../test/helpers/harness';
import { startSharedTemporal } from '../../test/helpers/temporal-dev-server';

export interface BenchWorld {
  h: Harness;
  close(): Promise<void>;
}

/**
 * What the test harness gets from jest's global setup, started here for a benchmark process: a
 * Temporal dev server (the CLI binary), the workflow bundle, and a scratch database on
 * DATABASE_URL's server (dropped by `close`). Then the same harness the integration tests use.
 */
export async function startBenchWorld(options: HarnessOptions = {}): Promise<BenchWorld> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  process.env.TEST_ADMIN_DATABASE_URL = hostPostgresUrl();

  const temporal = await startSharedTemporal();
  const bundleDir = await mkdtemp(path.join(os.tmpdir(), 'delivery-bench-bundle-'));
  try {
    const bundlePath = await writeWorkflowBundle(path.join(bundleDir, 'workflows.js'), { workflowsPath: path.resolve(__dirname, '../../workflows') });
    process.env.TEST_TEMPORAL_ADDRESS = temporal.address;
    process.env.TEST_WORKFLOW_BUNDLE = bundlePath;
    const h = await startHarness(options);
    return {
      h,
      async close() {
        await h.close();
        await temporal.teardown();
        await rm(bundleDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await temporal.teardown();
    await rm(bundleDir, { recursive: true, force: true });
    throw error;
  }
}
