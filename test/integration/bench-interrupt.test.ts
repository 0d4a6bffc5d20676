/**
 * A benchmark stopped by a signal stops what it started: an engine or a service left running holds
 * its ports and takes the cores the next benchmark measures (seen: a killed benchmark's dev server
 * and service process went on for minutes beside the next one).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { exitOf } from '../../src/dev/child-processes';
import { isProcessAlive as alive } from '../../src/dev/processes';

const RUN_MODULE = path.join(__dirname, '..', '..', 'bench', 'lib', 'run.ts');

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'bench-interrupt-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

test.each(['SIGTERM', 'SIGINT'] as const)('a benchmark sent %s stops the processes it started, their own children too, and exits by the signal', async (signal) => {
  // The benchmark (Node runs run.ts with its types stripped) starts a shell, which starts a sleep of its own.
  const script = path.join(dir, `bench-${signal}.js`);
  await writeFile(script, `
    const { spawn } = require('node:child_process');
    const { runBenchmark } = require(${JSON.stringify(RUN_MODULE)});
    runBenchmark(async () => {
      const shell = spawn('sh', ['-c', 'sleep 300 & echo "$!"; wait'], { stdio: ['ignore', 'pipe', 'ignore'] });
      shell.stdout.once('data', (grandchild) => process.stdout.write(shell.pid + ' ' + grandchild));
      await new Promise(() => undefined);
    });
  `);
  const bench = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'pipe'] });
  const started = await new Promise<string>((resolve) => bench.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString())));
  const [shell, sleeper] = started.trim().split(' ').map(Number);
  expect(alive(shell) && alive(sleeper)).toBe(true);

  bench.kill(signal);
  const code = await exitOf(bench);

  expect(code).toBe(128 + os.constants.signals[signal]);
  expect({ shell: alive(shell), sleeper: alive(sleeper) }).toEqual({ shell: false, sleeper: false });
}, 20_000);
