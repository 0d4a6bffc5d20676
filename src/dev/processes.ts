import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';

/** Whether a process with this pid exists (EPERM: it exists but belongs to another user). */
export function isProcessAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The command line of a process (Linux /proc), '' when unknown. Used to check that a pid read from a
 * state file still belongs to the server we started, not to an unrelated process that reused the pid.
 */
export function processCommandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return '';
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls until the pid is gone; true if it exited within the timeout. */
export async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isProcessAlive(pid)) {
    if (Date.now() >= deadline) return false;
    await sleep(100);
  }
  return true;
}

/**
 * For processes we did not spawn ourselves (no ChildProcess to wait on): sends each signal in turn,
 * moving to the next when the process is still there after `timeoutMs`, e.g. SIGTERM then SIGKILL.
 */
export async function terminatePid(pid: number, signals: NodeJS.Signals[], timeoutMs: number): Promise<void> {
  for (const signal of signals) {
    try {
      process.kill(pid, signal);
    } catch {
      return; // already gone
    }
    if (await waitForExit(pid, timeoutMs)) return;
  }
}

export async function readJsonFile<T>(file: string): Promise<T | undefined> {
  try {
    return JSON.parse(await fs.readFile(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

/** Owner-only: these files may hold a password. */
export async function writeJsonFile(file: string, value: unknown): Promise<void> {
  await fs.writeFile(file, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
}
