import { setTimeout } from 'node:timers/promises';

/**
 * Runs `sample` now and every `everyMs` after it finishes, until the returned function is called;
 * that resolves once the sample in progress is done, so what it gathered is complete.
 */
export function sampleUntilStopped(sample: () => unknown, everyMs = 250): () => Promise<void> {
  let stopped = false;
  const sampling = (async () => {
    while (!stopped) {
      await sample();
      await setTimeout(everyMs);
    }
  })();
  return async () => {
    stopped = true;
    await sampling;
  };
}
