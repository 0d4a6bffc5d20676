import { condition, proxyActivities, setHandler, sleep, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { OUTBOUND_ATTEMPT } from '../src/domain/activity-policy';
import { busyWaitMs, outboundTaskQueue, type OutboundDeliveryInput } from '../src/domain/outbound-events';
import { redeliverOutboundEvent } from './messages';

/**
 * One event to one endpoint (decisions §13): an attempt, then after each failure the next wait of
 * OUTBOUND_RETRY_SCHEDULE and another, until one is delivered, the endpoint answers 410 or is
 * disabled, or the schedule is spent (the delivery is then `failed`). A `busy` answer (the
 * endpoint's slots on that worker are all taken) is no attempt: the run waits a little and asks
 * again. A redelivery asked meanwhile (the signal) is one more attempt at once, the schedule left
 * where it was. Every attempt has the same `webhook-id`, the event's id.
 */
export async function deliverOutboundEvent(input: OutboundDeliveryInput): Promise<'delivered' | 'failed' | 'disabled'> {
  const { sendOutboundEvent } = proxyActivities<Activities>({ ...OUTBOUND_ATTEMPT, taskQueue: outboundTaskQueue(workflowInfo().taskQueue) });
  const target = { eventId: input.eventId, endpointId: input.endpointId };
  let redeliveryAsked = false;
  setHandler(redeliverOutboundEvent, () => {
    redeliveryAsked = true;
  });
  let attempt = 0;
  let busyTries = 0;
  for (;;) {
    const last = attempt >= input.retryScheduleMs.length;
    // This attempt answers every redelivery asked so far (a run started by one included).
    redeliveryAsked = false;
    const outcome = await sendOutboundEvent({ ...target, last });
    if (outcome.kind === 'busy') {
      busyTries += 1;
      // Math.random is deterministic in a workflow (seeded by the run).
      await sleep(busyWaitMs(busyTries, Math.random()));
      continue;
    }
    busyTries = 0;
    if (outcome.kind === 'gone' || outcome.kind === 'disabled') return 'disabled';
    if (redeliveryAsked) continue;
    if (outcome.kind === 'delivered') return 'delivered';
    if (last) return 'failed';
    // A timer as sleep() makes, so runs that waited with sleep() replay; a redelivery cuts it short.
    if (await condition(() => redeliveryAsked, input.retryScheduleMs[attempt])) continue;
    attempt += 1;
  }
}
