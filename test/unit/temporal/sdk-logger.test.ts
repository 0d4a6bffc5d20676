import type { LogEntry } from '@temporalio/worker';
import { SdkLogger } from '../../../src/temporal/worker';

const NO_WORKFLOWS = 'No workflows registered, not polling for workflow tasks';

function logged(taskQueue: string, message = NO_WORKFLOWS): string[] {
  const entries: LogEntry[] = [];
  new SdkLogger('WARN', (entry) => entries.push(entry)).warn(message, { sdkComponent: 'worker', taskQueue });
  return entries.map((e) => e.message);
}

test('the outbound deliveries\' worker, activities only by design, does not warn that it has no workflows', () => {
  expect(logged('fulfilment/outbound')).toEqual([]);
});

test('any other worker without workflows still warns, and other warnings of the outbound worker show', () => {
  expect(logged('fulfilment')).toEqual([NO_WORKFLOWS]);
  expect(logged('fulfilment/outbound', 'Activity failed')).toEqual(['Activity failed']);
});
