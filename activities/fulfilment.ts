import { ApplicationFailure } from '@temporalio/activity';
import { firstStepOf, itemReportsOf, sentResult, type FirstRound, type FulfilmentInput } from '../src/domain/fulfilment';
import type { deliveryActivities } from './deliveries';
import type { emailActivities } from './emails';
import type { purchaseActivities } from './purchases';

/** The activities the first round is made of, as createActivities built them. */
type FirstRoundSteps = Pick<ReturnType<typeof purchaseActivities>, 'recordPurchase'>
  & Pick<ReturnType<typeof emailActivities>, 'sendReceipt'>
  & Pick<ReturnType<typeof deliveryActivities>, 'recordItemOutcomes'>;

/**
 * How long the receipt's first attempt may take before the run goes on to retry it as a normal
 * activity: within the local activity's 30 s (DATABASE_STEP), so a relay that never answers is
 * retried with the email's whole window and then fails, rather than restarting this activity, whose
 * database steps are retried without end.
 */
const FIRST_SEND_MS = 20_000;

export function fulfilmentActivities({ recordPurchase, sendReceipt, recordItemOutcomes }: FirstRoundSteps) {
  return {
    /**
     * A fulfilment run's first round as one local activity: each local activity costs the run a
     * workflow activation, and each activation a call into the workflow sandbox. The purchase is
     * recorded (a refused sale fails this activity as recordPurchase does); a purchase that only
     * wants its receipt gets the receipt's first attempt, and then the items `itemIds` get the
     * round's outcome. Each step is idempotent by its key (purchase key, send key, an item's outcome
     * written once), so a retry after a database failure repeats none of them. A failed send is an
     * answer, not a failure: the run retries it as a normal activity under `sendKey`, with the
     * email's whole window.
     */
    async fulfilFirstRound(
      input: FulfilmentInput & { purchaseKey: string; sendKey: string; itemIds: string[] },
    ): Promise<FirstRound> {
      const { sendKey, itemIds, ...sale } = input;
      const recorded = await recordPurchase(sale);
      if (firstStepOf(recorded, sale.sendReceipt) !== 'send') return { recorded };
      let sent: { withdrawn: boolean };
      try {
        sent = await within(FIRST_SEND_MS, sendReceipt({ purchaseId: recorded.purchaseId, sendKey }));
      } catch (error) {
        const permanent = error instanceof ApplicationFailure && error.nonRetryable === true;
        return { recorded, sendFailure: { permanent, message: error instanceof Error ? error.message : String(error) } };
      }
      const result = sentResult(sent);
      // A sale of the API or the dashboard has no items.
      const alerts = itemIds.length === 0 ? [] : await recordItemOutcomes({ items: itemReportsOf(itemIds, sale.deliveryItemId, result, recorded) });
      return { recorded, result, alerts };
    },
  };
}

/** `work`, or a temporary failure once `ms` passed (the work itself goes on). */
async function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer from the mail server within ${ms / 1000} s`)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
