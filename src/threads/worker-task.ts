import path from 'node:path';
import { Worker, type ResourceLimits, type TransferListItem } from 'node:worker_threads';
import { BusyError } from '../domain/errors';

/**
 * One CPU-bound task on a worker thread of its own (the evidence PDF, PDF stamping), so that the
 * event loop that answers requests (/healthz, downloads) keeps answering while it runs. A task that
 * takes longer than its time is ended and answered 503; one that runs out of its memory ends its
 * thread, not the process.
 */
export interface WorkerTask<Input> {
  /** The entry module's path without its extension: `.js` in the build, `.ts` when run from the sources (ts-jest). */
  entry: string;
  input: Input;
  /** Buffers handed to the thread rather than copied. */
  transfer?: TransferListItem[];
  timeoutMs: number;
  /** The 503's message when the time runs out. */
  tooLong: string;
  resourceLimits?: ResourceLimits;
}

/**
 * Node 20 cannot load TypeScript: from the sources, the worker compiles what it requires with the
 * typescript package (a dev dependency, present wherever the sources run) before loading its entry.
 */
function typeScriptWorkerSource(file: string): string {
  return `
    const fs = require('node:fs');
    const ts = require(${JSON.stringify(require.resolve('typescript'))});
    require.extensions['.ts'] = (module, filename) => {
      const source = fs.readFileSync(filename, 'utf8');
      const options = { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true };
      module._compile(ts.transpileModule(source, { fileName: filename, compilerOptions: options }).outputText, filename);
    };
    require(${JSON.stringify(file)});`;
}

/** Runs the entry with `input` as its workerData; resolves with the first message it posts. */
export function runWorkerTask<Input, Output>(task: WorkerTask<Input>): Promise<Output> {
  const file = `${task.entry}${path.extname(__filename)}`;
  const options = { workerData: task.input, transferList: task.transfer, resourceLimits: task.resourceLimits };
  const worker = file.endsWith('.ts')
    ? new Worker(typeScriptWorkerSource(file), { ...options, eval: true })
    : new Worker(file, options);
  return new Promise<Output>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new BusyError(task.tooLong));
      void worker.terminate();
    }, task.timeoutMs);
    // Whichever comes first settles the promise; the others change nothing.
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the worker thread ${path.basename(file)} stopped (exit code ${code}) without an answer`));
    });
  });
}
