/**
 * The end-to-end benchmark's baseline: a workflow shaped like one order line's fulfilment (three
 * activities in sequence: record, send, report) whose activities do nothing.
 */
import { proxyActivities } from '@temporalio/workflow';

export interface NoopActivities {
  noopRecord(): Promise<void>;
  noopSend(): Promise<void>;
  noopReport(): Promise<void>;
}

const { noopRecord, noopSend, noopReport } = proxyActivities<NoopActivities>({ startToCloseTimeout: '30 seconds' });

export async function noopFulfilment(): Promise<void> {
  await noopRecord();
  await noopSend();
  await noopReport();
}
