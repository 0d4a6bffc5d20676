import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { OrderAlertRequest } from '../src/domain/fulfilment';

const { sendOrderAlert } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  scheduleToCloseTimeout: '1 hour',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});

/**
 * The alert of an entry that the front door recorded as `Error` at once (every line unmatched or
 * held): it still goes out through a workflow, so it is retried like any other email.
 */
export async function orderAlert(request: OrderAlertRequest): Promise<void> {
  await sendOrderAlert(request);
}
