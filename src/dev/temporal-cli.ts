import { accessSync, constants, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Config } from '../config';

/**
 * Where `npm run setup:temporal` (scripts/setup-temporal.js) builds the CLI. Both must agree: keep this
 * in step with `cacheDir()` there.
 */
export function temporalCliCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const cacheHome = env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(cacheHome, 'delivery-service', 'temporal');
}

export function isExecutableFile(file: string): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
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
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, exe);
    if (isExecutableFile(candidate)) return candidate;
  }

  const cached = path.join(temporalCliCacheDir(env), exe);
  return isExecutableFile(cached) ? cached : undefined;
}
