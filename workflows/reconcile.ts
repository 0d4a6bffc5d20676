import { ActivityFailure, continueAsNew, proxyActivities, proxyLocalActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { DATABASE_STEP, RECONCILE_PAGE } from '../src/domain/activity-policy';
import { addResults, laterChange, NO_RESULT, PAGES_BEFORE_CONTINUE, type ReconcileInput, type ReconcileProgress } from '../src/domain/reconciliation';

const { beginReconcile, finishReconcile } = proxyLocalActivities<Activities>(DATABASE_STEP);
const { pauseReconcile } = proxyActivities<Activities>({ ...DATABASE_STEP, startToCloseTimeout: '1 minute', scheduleToCloseTimeout: '1 hour' });
const { reconcilePage } = proxyActivities<Activities>(RECONCILE_PAGE);

/**
 * One reconciliation run of an integration (decisions §15), started by its schedule: pages through
 * the platform's orders changed since the high-water mark less an hour (or the lookback), one
 * activity per page that reads it and records its paid orders through the webhook intake. A 429
 * waits its Retry-After here (a durable timer) and asks again; the platform's "near the limit"
 * slows the next page down; a refusal (401/403) pauses the integration and ends the run. Where the
 * run is (the cursor of the next page, the counts) is the workflow's state, so a worker killed
 * mid-run resumes at the page it was reading; after PAGES_BEFORE_CONTINUE pages it continues as
 * new with that state. The last result is recorded whatever happened; the high-water mark moves
 * only when every page was read (a run that stopped early leaves it, and the next reads again what
 * this one missed: on a list read newest first, the older orders behind the page that failed).
 */
export async function reconcileIntegration(input: ReconcileInput): Promise<void> {
  const { orgId, platform } = input;
  let progress: ReconcileProgress;
  let readEveryPage = false;
  if (input.progress) {
    progress = input.progress;
  } else {
    const begun = await beginReconcile({ orgId, platform });
    if (begun === null) return;
    progress = { since: begun.since, cursor: null, result: NO_RESULT };
  }
  for (let pages = 0; ; pages++) {
    if (pages >= PAGES_BEFORE_CONTINUE) await continueAsNew<typeof reconcileIntegration>({ orgId, platform, progress });
    let page;
    try {
      page = await reconcilePage({ orgId, platform, since: progress.since, cursor: progress.cursor });
    } catch (error) {
      if (!(error instanceof ActivityFailure)) throw error;
      // The platform kept failing: counted, and the next run starts from the high-water mark.
      progress = { ...progress, result: addResults(progress.result, { ...NO_RESULT, errors: 1 }) };
      break;
    }
    if (page.kind === 'throttled') {
      await sleep(page.retryAfterMs);
      continue;
    }
    // Turned off meanwhile: the mark stays where it was, for the pages not read.
    if (page.kind === 'stopped') break;
    if (page.kind === 'refused') {
      await pauseReconcile({ orgId, platform, reason: page.reason, savedAt: page.savedAt });
      progress = { ...progress, result: addResults(progress.result, { ...NO_RESULT, errors: 1 }) };
      break;
    }
    progress = {
      ...progress, cursor: page.nextCursor, result: addResults(progress.result, page.result), newestChange: laterChange(progress.newestChange ?? null, page.newestChange),
    };
    if (page.nextCursor === null) {
      readEveryPage = true;
      break;
    }
    if (page.slowDownMs > 0) await sleep(page.slowDownMs);
  }
  await finishReconcile({ orgId, platform, result: progress.result, newestChange: readEveryPage ? progress.newestChange ?? null : null });
}
