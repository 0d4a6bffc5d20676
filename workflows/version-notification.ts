import { ActivityFailure, continueAsNew, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { DATABASE_STEP, UPDATE_NOTICES } from '../src/domain/activity-policy';
import { CONTINUE_AFTER, NOTICE_BATCH, type VersionNotificationInput } from '../src/domain/version-notification';

const { nextNoticeRecipients, finishNotification, giveUpNotices } = proxyLocalActivities<Activities>(DATABASE_STEP);
const { sendUpdateNotices } = proxyActivities<Activities>(UPDATE_NOTICES);

/**
 * Emails every buyer of a product one notice of its new version (decisions §12), in batches by
 * purchase id: the activity sends each at the organisation's rate and at most once (the sent-email
 * log's key per version and purchase), so a worker killed mid-batch resumes where it was and no one
 * gets two. A batch whose temporary failures outlast its retries logs those notices failed and the
 * run goes on. After CONTINUE_AFTER recipients the run continues as new with where it got to.
 */
export async function versionNotification(input: VersionNotificationInput): Promise<void> {
  let after = input.after;
  let done = 0;
  for (;;) {
    const batch = await nextNoticeRecipients({ notificationId: input.notificationId, after, limit: NOTICE_BATCH });
    if (batch.length === 0) break;
    try {
      await sendUpdateNotices({ notificationId: input.notificationId, purchaseIds: batch });
    } catch (error) {
      // A mail relay that kept deferring some of them: those are logged failed, the rest goes on.
      if (!(error instanceof ActivityFailure)) throw error;
      await giveUpNotices({ notificationId: input.notificationId, purchaseIds: batch, reason: `temporary failures outlasted the retries: ${error.cause?.message ?? error.message}` });
    }
    after = batch[batch.length - 1];
    done += batch.length;
    if (done >= CONTINUE_AFTER) await continueAsNew<typeof versionNotification>({ notificationId: input.notificationId, after });
  }
  await finishNotification({ notificationId: input.notificationId });
}
