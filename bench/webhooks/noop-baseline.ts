/**
 * The engine's own ceiling: `count` runs of a workflow with one activity that does nothing, started
 * like the service starts its fulfilment runs (same search attributes), on a worker in this
 * process with the SDK's defaults. Returns runs per second, start to last activity.
 */
import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Worker } from '@temporalio/worker';
import { OrderIdSearchAttribute, OrgIdSearchAttribute, PlatformSearchAttribute } from '../../src/temporal/search-attributes';
import { pool, secondsSince, until } from '../lib/pool';
import type { noopFulfilment } from './noop-workflows';

export async function noopRunsPerSecond(address: string, count: number, inFlight: number): Promise<number> {
  const taskQueue = `bench-noop-${randomBytes(4).toString('hex')}`;
  const connection = await NativeConnection.connect({ address });
  const clientConnection = await Connection.connect({ address });
  const client = new Client({ connection: clientConnection });
  const bundle = await bundleWorkflowCode({ workflowsPath: require.resolve('./noop-workflows'), logger: new DefaultLogger('WARN') });
  let done = 0;
  const worker = await Worker.create({
    connection, taskQueue, workflowBundle: bundle,
    activities: { noopActivity: async () => { done += 1; } },
  });
  const running = worker.run();
  try {
    const started = process.hrtime.bigint();
    await pool(count, inFlight, async (i) => {
      await client.workflow.start<typeof noopFulfilment>('noopFulfilment', {
        taskQueue,
        workflowId: `${taskQueue}-${i}`,
        args: [],
        typedSearchAttributes: [
          { key: OrgIdSearchAttribute, value: taskQueue },
          { key: PlatformSearchAttribute, value: 'bench' },
          { key: OrderIdSearchAttribute, value: String(i) },
        ],
      });
    });
    await until(() => done >= count, 'the no-op runs');
    return count / secondsSince(started);
  } finally {
    worker.shutdown();
    await running;
    await connection.close();
    await clientConnection.close();
  }
}
