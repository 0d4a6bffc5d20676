/** Processes the service, its tests and benchmarks start and watch: their output, readiness and exit. */
import { spawn, type ChildProcess } from 'node:child_process';

export interface WatchedChild {
  child: ChildProcess;
  /** Everything it wrote to stdout and stderr so far (the last 20,000 characters). */
  output: () => string;
}

export function spawnWatched(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): WatchedChild {
  const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  return { child, output: () => output };
}

/** Resolves once the output matches; throws with the output when the process exits first or time runs out. */
export async function waitForOutput(watched: WatchedChild, pattern: RegExp, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pattern.test(watched.output())) {
    if (watched.child.exitCode !== null) throw new Error(`exited (${watched.child.exitCode}) before ${pattern}; output:\n${watched.output()}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern}; output:\n${watched.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export function exitOf(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });
}

/** `signal` (SIGTERM unless the program shuts down on another), then SIGKILL if it has not exited after `graceMs`. */
export async function stopChild(child: ChildProcess, graceMs = 30_000, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = exitOf(child);
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}
