/**
 * The workflow bundle: every workflow with what it imports, packed once for the worker's sandbox.
 * `npm run build` writes it beside the compiled code, so a worker starts without bundling (several
 * seconds of CPU); a worker run from sources, or from a build without it, bundles at start.
 * Two of them: plain, and traced (with OpenTelemetry's workflow interceptors) for a worker with
 * tracing on, so tracing costs nothing when it is off. The interceptors add no command to a
 * history, so either bundle replays what the other recorded (the replay test runs both).
 * Imports nothing of the ORM: the test global setup uses it too.
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { FAILURE_CONVERTER_PATH } from './encryption-codec';

export const WORKFLOWS_PATH = require.resolve('../../workflows');

/** OpenTelemetry's workflow interceptors: in the traced bundle only. */
export const WORKFLOW_INTERCEPTOR_MODULES = [require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors')];

/** The bundles' file names in the build's folder (`dist/`). */
export function bundleFileName(traced: boolean): string {
  return traced ? 'workflow-bundle-traced.js' : 'workflow-bundle.js';
}

/** Where the build puts the bundles: `dist/workflow-bundle.js` (and `-traced.js`) for `dist/src/temporal/…`. */
export function prebuiltBundlePath(traced: boolean): string {
  return path.resolve(__dirname, '../..', bundleFileName(traced));
}

export async function writeWorkflowBundle(
  outFile: string,
  options: { workflowsPath?: string; traced?: boolean } = {},
): Promise<string> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: options.workflowsPath ?? WORKFLOWS_PATH,
    workflowInterceptorModules: options.traced ? WORKFLOW_INTERCEPTOR_MODULES : [],
    // Failures a workflow raises are converted in the sandbox: with the workers' converter.
    failureConverterPath: FAILURE_CONVERTER_PATH,
    logger: new DefaultLogger('WARN'),
  });
  await mkdir(path.dirname(outFile), { recursive: true });
  await writeFile(outFile, code);
  return outFile;
}

/** The build's bundle when there is one (only a compiled worker has it). */
export function prebuiltBundle(traced: boolean): { codePath: string } | undefined {
  const file = prebuiltBundlePath(traced);
  return existsSync(file) ? { codePath: file } : undefined;
}

if (require.main === module) {
  Promise.all([false, true].map((traced) => writeWorkflowBundle(prebuiltBundlePath(traced), { traced }))).then(
    (files) => process.stderr.write(`workflow bundles: ${files.map((f) => path.relative(process.cwd(), f)).join(', ')}\n`),
    (error: unknown) => {
      process.stderr.write(`workflow bundle failed: ${(error as Error).stack ?? String(error)}\n`);
      process.exit(1);
    },
  );
}
