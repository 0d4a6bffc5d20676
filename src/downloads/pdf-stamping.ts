import path from 'node:path';
import type { PdfStamp } from '../domain/pdf-stamp';
import { UnprocessableError } from '../domain/errors';
import { inPdfTurn } from '../threads/pdf-turns';
import { runWorkerTask } from '../threads/worker-task';

/**
 * PDF stamping off the event loop (decisions §16): each call runs on a worker thread of its own
 * (pdf-stamp-worker.ts), one a core with the process's other PDF work (threads/pdf-turns.ts), with a time and a memory limit, so a large or hostile PDF
 * costs that thread and never the requests the process is answering.
 */

/** What the worker is given: a PDF, and a stamp to apply, or null to only check that it can be stamped. */
export interface StampTask {
  pdf: Uint8Array;
  stamp: PdfStamp | null;
}

export type StampOutcome = { stamped: Uint8Array | null } | { refused: string };

/** Well past a 300-page, 20 MB book (under a second here); a 503 beyond it. */
const STAMP_TIMEOUT_MS = 60_000;
/** pdf-lib holds the parsed document in the heap; the bytes themselves are outside it. */
const STAMP_HEAP_MB = 1024;
/**
 * Its own young generation, not the API process's small one (src/http/api-process.ts): parsing a
 * book allocates fast, and with 8 MB semi-spaces its first download took about 11 % longer.
 */
const STAMP_YOUNG_HEAP_MB = 48;

async function runStampTask(task: StampTask): Promise<StampOutcome> {
  return inPdfTurn(() => runWorkerTask<StampTask, StampOutcome>({
    entry: path.join(__dirname, 'pdf-stamp-worker'),
    input: task,
    // The PDF moves to the thread: the caller's copy is not used again.
    transfer: [task.pdf.buffer as ArrayBuffer],
    timeoutMs: STAMP_TIMEOUT_MS,
    tooLong: 'stamping this PDF took too long; try again later',
    resourceLimits: { maxOldGenerationSizeMb: STAMP_HEAP_MB, maxYoungGenerationSizeMb: STAMP_YOUNG_HEAP_MB },
  }));
}

/** The PDF stamped; an UnprocessableError (422) with the reason when it cannot be. The `pdf` buffer is handed over. */
export async function stampPdfOffThread(pdf: Uint8Array, stamp: PdfStamp): Promise<Uint8Array> {
  const outcome = await runStampTask({ pdf, stamp });
  if ('refused' in outcome) throw new UnprocessableError(outcome.refused);
  return outcome.stamped!;
}

/** Refuses (422, with the reason) a PDF that could not be stamped. The `pdf` buffer is handed over. */
export async function assertStampableOffThread(pdf: Uint8Array, name: string): Promise<void> {
  const outcome = await runStampTask({ pdf, stamp: null });
  if ('refused' in outcome) throw new UnprocessableError(`${name} cannot be stamped for buyers: ${outcome.refused}`);
}
