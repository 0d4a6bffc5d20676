import { accessSync, constants, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Where the setup scripts build the Go binaries the service runs on this machine (the Temporal CLI,
 * server and UI, SeaweedFS): `~/.cache/delivery-service`. Keep in step with `cacheRoot()` in
 * scripts/go-builds.js.
 */
export function binaryCacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'delivery-service');
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

export function findOnPath(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (dir && isExecutableFile(path.join(dir, name))) return path.join(dir, name);
  }
  return undefined;
}

/** `name` on PATH, else `<cache>/<folder>/<name>` as a setup script built it. */
export function findCachedBinary(name: string, folder: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const cached = path.join(binaryCacheRoot(env), folder, name);
  return findOnPath(name, env) ?? (isExecutableFile(cached) ? cached : undefined);
}
