import type { temporal } from '@temporalio/proto';

/**
 * Whether a run's first workflow task came in the answer to its start (eager workflow start) rather
 * than through the task queue. The engine records a task it hands out from the task queue with the
 * size of the history stored before it; an eagerly started one is recorded in the same write as the
 * run itself, before any history is stored, so with none.
 */
export function startedEagerly(events: temporal.api.history.v1.IHistoryEvent[]): boolean {
  const firstTask = events.find((e) => e.workflowTaskStartedEventAttributes)?.workflowTaskStartedEventAttributes;
  return firstTask !== undefined && Number(firstTask?.historySizeBytes ?? 0) === 0;
}
