/**
 * The end-to-end benchmark's baseline: a workflow with one activity that does nothing, the least
 * an order can cost the engine (one start, two workflow tasks, one activity task).
 */
import { proxyActivities } from '@temporalio/workflow';

export interface NoopActivities {
  noopActivity(): Promise<void>;
}

const { noopActivity } = proxyActivities<NoopActivities>({ startToCloseTimeout: '30 seconds' });

export async function noopFulfilment(): Promise<void> {
  await noopActivity();
}
