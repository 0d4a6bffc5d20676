import { condition, log, proxyActivities, setHandler } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { emailWithin } from '../src/domain/activity-policy';
import type { BuyerReminderInput, ReminderOutcome } from '../src/domain/reminder';
import { transferCompleted } from './messages';

/**
 * The unclaimed-purchase reminder (decisions §16): a durable wait from the receipt's acceptance to
 * `dueAt`, not a sweep; a worker that dies meanwhile loses nothing, the engine keeps the wait. Runs
 * are started with the wait as their start delay, so they take no workflow task until due (runs
 * started before that wait on the timer below). A completed file transfer ends the wait (its
 * signal-with-start cuts the delay short) without sending; at the end the activity looks at the
 * purchase again (a transfer whose signal was lost, a revocation, notices turned off) and sends at
 * most one reminder (its sent-email key is the purchase's).
 */
export async function buyerReminder(input: BuyerReminderInput): Promise<ReminderOutcome> {
  let transferred = false;
  setHandler(transferCompleted, () => {
    transferred = true;
  });
  // The engine's clock at this workflow task: a run started late (the outbox waited for the
  // engine) waits less, and one started after its time does not wait. A timer needs at least 1 ms.
  const waitMs = Math.max(1, Date.parse(input.dueAt) - Date.now());
  if (await condition(() => transferred, waitMs)) return 'transferred';
  const { sendReminder } = proxyActivities<Activities>(emailWithin(input.emailRetryWindowMs));
  const outcome = await sendReminder({ purchaseId: input.purchaseId });
  if (outcome !== 'sent') log.info('reminder not sent', { purchaseId: input.purchaseId, outcome });
  return outcome;
}
