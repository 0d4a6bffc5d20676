/** Prints why a benchmark failed and exits non-zero, so `bench/run-all` counts it. */
export function exitOnFailure(error: unknown): never {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
}

/** Runs a benchmark's main to the end and exits: servers and pools it opened must not keep it alive. */
export function runBenchmark(main: () => Promise<void>): void {
  main().then(() => process.exit(0), exitOnFailure);
}
