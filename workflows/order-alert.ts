import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { ORDER_ALERT } from '../src/domain/activity-policy';
import type { OrderAlertRequest } from '../src/domain/fulfilment';

const { sendOrderAlert } = proxyActivities<Activities>(ORDER_ALERT);

/**
 * The alert of an entry that the front door recorded as `Error` at once (every line unmatched or
 * held): it still goes out through a workflow, so it is retried like any other email.
 */
export async function orderAlert(request: OrderAlertRequest): Promise<void> {
  await sendOrderAlert(request);
}
