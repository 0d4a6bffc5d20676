/**
 * How the worker role's Node process is started (package.json's `start:worker`, compose, the
 * cluster starter and the benchmarks): memory bounds measured under the end-to-end benchmark's
 * load (issue "launch-day load": ≤ 250 MB RSS per role). Without them V8 lets the heap of a
 * machine with gigabytes free grow to 150-200 MB of mostly garbage before collecting, and glibc
 * gives each of the worker's threads (Temporal's core, the workflow thread) its own malloc arena:
 * 350-430 MB peak RSS for 2,000 orders, against 251 MB with these settings at the same throughput.
 * The main thread's live heap stayed under 75 MB in that run, so the 112 MB ceiling leaves room.
 */
export const WORKER_NODE_FLAGS = ['--max-old-space-size=112', '--max-semi-space-size=8'] as const;

/** Read by glibc at process start, so it is set in the environment, not from inside the process. */
export const WORKER_PROCESS_ENV = { MALLOC_ARENA_MAX: '2' } as const;
