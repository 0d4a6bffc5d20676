/** A worker thread's entry (see pdf-stamping.ts): stamps or checks the PDF it was given and posts the outcome back. */
import { parentPort, workerData } from 'node:worker_threads';
import { assertStampable, stampPdf, UnstampablePdfError } from './pdf-stamp';
import type { StampOutcome, StampTask } from './pdf-stamping';

async function run(task: StampTask): Promise<StampOutcome> {
  try {
    if (task.stamp === null) {
      await assertStampable(task.pdf);
      return { stamped: null };
    }
    const stamped = await stampPdf(task.pdf, task.stamp);
    return { stamped };
  } catch (error) {
    if (error instanceof UnstampablePdfError) return { refused: error.message };
    throw error;
  }
}

void run(workerData as StampTask).then((outcome) => {
  parentPort!.postMessage(outcome, 'stamped' in outcome && outcome.stamped ? [outcome.stamped.buffer as ArrayBuffer] : []);
});
