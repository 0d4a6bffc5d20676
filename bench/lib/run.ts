import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';

/** Prints why a benchmark failed and exits non-zero, so `bench/run-all` counts it. */
export function exitOnFailure(error: unknown): never {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
}

/** How long an interrupted benchmark's processes get to stop after SIGTERM before SIGKILL. */
const INTERRUPT_GRACE_MS = 5_000;

/** The processes below this one (children, theirs, …), from the parent field of each /proc/<pid>/stat. */
function descendants(): number[] {
  const childrenOf = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // ended while we looked
    }
    // The command sits in parentheses and may hold spaces; the state and the parent follow it.
    const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    childrenOf.set(parent, [...(childrenOf.get(parent) ?? []), pid]);
  }
  const found: number[] = [];
  const queue = [process.pid];
  for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
    for (const child of childrenOf.get(pid) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/**
 * Whether the process exists. src/dev/processes has the same check; this file imports nothing of the
 * project's, so that its test can run it with Node alone (which strips its types but resolves no
 * extensionless `.ts` imports).
 */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function signalEach(pids: number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // ended already
    }
  }
}

/**
 * A benchmark stopped by a signal (`kill`, a timeout, Ctrl-C) would otherwise leave the engine and
 * the service it started running: they hold their ports and take the cores the next benchmark
 * measures. They get SIGTERM, then SIGKILL after a grace, and the benchmark exits as the signal asks.
 */
async function stopStartedProcesses(signal: NodeJS.Signals): Promise<never> {
  process.stderr.write(`${signal}: stopping the processes this benchmark started\n`);
  const pids = descendants();
  signalEach(pids, 'SIGTERM');
  const deadline = Date.now() + INTERRUPT_GRACE_MS;
  while (pids.some(alive) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  signalEach(pids, 'SIGKILL');
  process.exit(128 + os.constants.signals[signal]);
}

/** Runs a benchmark's main to the end and exits: servers and pools it opened must not keep it alive. */
export function runBenchmark(main: () => Promise<void>): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void stopStartedProcesses(signal));
  main().then(() => process.exit(0), exitOnFailure);
}
