/**
 * The workflow bundle: every workflow with what it imports, packed once for the worker's sandbox.
 * `npm run build` writes it beside the compiled code, so a worker starts without bundling (several
 * seconds of CPU); a worker run from sources, or from a build without it, bundles at start.
 * Imports nothing of the ORM: the test global setup uses it too.
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';

export const WORKFLOWS_PATH = require.resolve('../../workflows');

/**
 * OpenTelemetry's workflow interceptors are always in the bundle, so one bundle replays every
 * history whether tracing was on or off; with tracing off their spans go to a no-op sink.
 */
export const WORKFLOW_INTERCEPTOR_MODULES = [require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors')];

/** Where the build puts the bundle: `dist/workflow-bundle.js` for `dist/src/temporal/…`. */
export const PREBUILT_BUNDLE_PATH = path.resolve(__dirname, '../../workflow-bundle.js');

export async function writeWorkflowBundle(outFile: string, workflowsPath: string = WORKFLOWS_PATH): Promise<string> {
  const { code } = await bundleWorkflowCode({ workflowsPath, workflowInterceptorModules: WORKFLOW_INTERCEPTOR_MODULES, logger: new DefaultLogger('WARN') });
  await mkdir(path.dirname(outFile), { recursive: true });
  await writeFile(outFile, code);
  return outFile;
}

/** The build's bundle when there is one (only a compiled worker has it). */
export function prebuiltBundle(): { codePath: string } | undefined {
  return existsSync(PREBUILT_BUNDLE_PATH) ? { codePath: PREBUILT_BUNDLE_PATH } : undefined;
}

if (require.main === module) {
  writeWorkflowBundle(PREBUILT_BUNDLE_PATH).then(
    (file) => process.stderr.write(`workflow bundle: ${path.relative(process.cwd(), file)}\n`),
    (error: unknown) => {
      process.stderr.write(`workflow bundle failed: ${(error as Error).stack ?? String(error)}\n`);
      process.exit(1);
    },
  );
}
