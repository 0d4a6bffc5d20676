import path from 'node:path';
import { spawnWatched, waitForOutput, type WatchedChild } from '../../src/dev/child-processes';
import type { Harness } from './harness';

const ROOT = path.resolve(__dirname, '../..');

/**
 * Worker processes from the build (as `npm run start:worker` runs them) on a harness's database,
 * task queue, mailbox and key file, for the tests that SIGKILL one mid-run. `close` kills those
 * still running.
 */
export function workerProcesses(h: () => Harness, env: Record<string, string> = {}) {
  const started: WatchedChild[] = [];
  return {
    async start(): Promise<WatchedChild> {
      const { config, mailbox } = h();
      const worker = spawnWatched(process.execPath, [path.join(ROOT, 'dist/src/temporal/worker-main.js')], {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: config.dataDir, DATABASE_URL: config.databaseUrl, DATABASE_POOL_MAX: String(config.databasePoolMax),
          TEMPORAL_ADDRESS: config.temporal.address, TEMPORAL_TASK_QUEUE: config.temporal.taskQueue, SMTP_URL: mailbox.url,
          BASE_URL: config.baseUrl, WORKER_METRICS_ADDRESS: 'off', LOG_LEVEL: 'warn', ...env,
        },
      });
      started.push(worker);
      await waitForOutput(worker, /worker polling task queue/, 60_000);
      return worker;
    },
    close(): void {
      for (const w of started) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
    },
  };
}
