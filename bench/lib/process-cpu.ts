/**
 * Where the machine's CPU went over a stretch of a benchmark, by program: the workflow engine
 * (`temporal`), PostgreSQL (`postgres`), the service's Node processes and the load generator (this
 * process), read from /proc/<pid>/stat (user + system time). A process that ended within the stretch
 * is not counted; the benchmark's are long-lived.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';

/** Clock ticks per second of /proc's times (USER_HZ, 100 on Linux everywhere). */
const TICKS_PER_SECOND = 100;

/**
 * The group of a process by its program's file (Node 24 names its main thread `MainThread`, so not by
 * command): the dev server is the `temporal` CLI; the real server (`BENCH_ENGINE=server`) is a
 * binary named `server` in the `temporal-server` folder the setup script builds.
 */
function groupOf(pid: number, exe: string): string | null {
  const program = path.basename(exe);
  if (pid === process.pid) return 'load generator';
  if (program === 'temporal' || program.startsWith('temporal-') || path.basename(path.dirname(exe)) === 'temporal-server') return 'engine';
  if (program === 'postgres') return 'PostgreSQL';
  if (program === 'node') return 'service';
  return null;
}

/** CPU seconds used so far by each live process of the groups above, keyed by pid. */
function cpuSecondsByProcess(): Map<number, { group: string; seconds: number }> {
  const seen = new Map<number, { group: string; seconds: number }>();
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    let stat: string;
    let exe: string;
    try {
      exe = readlinkSync(`/proc/${pid}/exe`);
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // ended while we looked, or not ours to read
    }
    const group = groupOf(pid, exe);
    if (group === null) continue;
    // The command sits in parentheses and may hold spaces; the fields after it are positional.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime
    seen.set(pid, { group, seconds: ticks / TICKS_PER_SECOND });
  }
  return seen;
}

/**
 * Starts a stretch; the returned function ends it and describes the cores each group kept busy on
 * average (the machine has `os.availableParallelism()` of them), and with `per` the CPU
 * milliseconds each group spent per unit of work (an order).
 */
export function measureProcessCpu(): (per?: { count: number; unit: string }) => string {
  const before = cpuSecondsByProcess();
  const startedAt = process.hrtime.bigint();
  return (per) => {
    const seconds = Number(process.hrtime.bigint() - startedAt) / 1e9;
    const used = new Map<string, number>();
    for (const [pid, now] of cpuSecondsByProcess()) {
      used.set(now.group, (used.get(now.group) ?? 0) + now.seconds - (before.get(pid)?.seconds ?? 0));
    }
    const sorted = [...used].sort((a, b) => b[1] - a[1]);
    const cores = sorted.map(([group, cpu]) => `${group} ${(cpu / seconds).toFixed(2)}`);
    if (!per) return `cores busy over ${seconds.toFixed(0)} s: ${cores.join(', ')}`;
    const costs = sorted.map(([group, cpu]) => `${group} ${((cpu * 1000) / per.count).toFixed(1)}`);
    return `cores busy over ${seconds.toFixed(0)} s: ${cores.join(', ')}; CPU ms per ${per.unit}: ${costs.join(', ')}`;
  };
}
