import path from 'node:path';
import type { Config } from '../config';
import { binaryCacheRoot, findOnPath, isExecutableFile } from './binary-cache';

/**
 * Where `npm run setup:temporal` (scripts/setup-temporal.js) builds the CLI. Both must agree: keep this
 * in step with `cacheDir()` there.
 */
export function temporalCliCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(binaryCacheRoot(env), 'temporal');
}

/**
 * The Temporal CLI binary for the embedded dev server, without building anything:
 * TEMPORAL_CLI_PATH (if executable) → `temporal` on PATH → the setup script's cache.
 * Same order as scripts/setup-temporal.js.
 */
export function findTemporalCli(
  config: { temporal: Pick<Config['temporal'], 'cliPath'> },
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  const configured = config.temporal.cliPath;
  if (configured && isExecutableFile(path.resolve(configured))) return path.resolve(configured);

  const exe = process.platform === 'win32' ? 'temporal.exe' : 'temporal';
  const cached = path.join(temporalCliCacheDir(env), exe);
  return findOnPath(exe, env) ?? (isExecutableFile(cached) ? cached : undefined);
}
