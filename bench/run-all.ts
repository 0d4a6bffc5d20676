/** Runs every benchmark one after another, each in its own process (clean memory figures). */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

const BENCHMARKS = [
  'api/products-bench.js',
  'api/purchases-list-bench.js',
  'licenses/validate.js',
  'outbox/claim-bench.js',
  'webhooks/engine-settings-bench.js',
  'webhooks/ack-bench.js',
  'webhooks/end-to-end-bench.js',
  'webhooks/outage-bench.js',
  'webhooks/tenant-fairness-bench.js',
  'webhooks/outbound-events-bench.js',
  'downloads/download-bench.js',
  'downloads/stamp-bench.js',
];

let failed = 0;
for (const bench of BENCHMARKS) {
  const file = path.join(__dirname, bench);
  if (!existsSync(file)) {
    process.stdout.write(`skip ${bench}: not built\n`);
    continue;
  }
  process.stdout.write(`\n=== ${bench}\n`);
  const result = spawnSync(process.execPath, ['--expose-gc', file], { stdio: 'inherit' });
  if (result.status !== 0) failed += 1;
}
process.exit(failed ? 1 : 0);
