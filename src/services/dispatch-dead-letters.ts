/**
 * Dead letters of the outbox: what becomes of a row the workflow engine will not take. Apart from
 * the outbox itself because it writes the delivery log (which records outbox rows in turn).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { alertWorkflowId } from '../domain/ids';
import { deadLetterDispatchRows } from '../outbox/outbox-store';
import { recordItemOutcomes } from './delivery-log';
import { undecidedItemsOfRun } from '../deliveries/delivery-store';
import { enqueueDispatches, ERROR_TEXT_LIMIT, type ClaimedDispatch } from './workflow-outbox';

/**
 * Rows Temporal refused for good (or too often) become dead letters: kept with their reason, never
 * claimed again. What waited on them is told: a webhook item ends `error` with the reason, its entry
 * leaves `Pending` (`Error` when nothing else was delivered) and that entry's alert is recorded in
 * the same transaction. Other kinds (an API sale, a fresh link, a notice, an alert) have no item;
 * their dead letter, the log and the dead-letter gauge are what operators see.
 */
export async function deadLetterDispatches(tx: EntityManager, rows: Array<{ row: ClaimedDispatch; error: string }>): Promise<void> {
  if (rows.length === 0) return;
  await deadLetterDispatchRows(tx, rows.map(({ row, error }) => ({ id: row.id, error: error.slice(0, ERROR_TEXT_LIMIT) })));
  const items: Array<{ itemId: string; reason: string }> = [];
  for (const { row, error } of rows) {
    const reason = `the workflow engine refused this run: ${error}`.slice(0, ERROR_TEXT_LIMIT);
    if (row.kind === 'fulfil-line') items.push({ itemId: row.payload.deliveryItemId, reason });
    if (row.kind === 'revoke') {
      const found = await undecidedItemsOfRun(tx, row.payload.deliveryId, row.workflowId);
      items.push(...found.map((itemId) => ({ itemId, reason })));
    }
  }
  if (items.length === 0) return;
  const alerts = await recordItemOutcomes(tx, items.map((i) => ({ itemId: i.itemId, outcome: 'error', reason: i.reason, purchaseId: null })));
  await enqueueDispatches(tx, alerts.map((alert) => ({
    kind: 'order-alert', workflowId: alertWorkflowId(alert), orgId: alert.orgId, payload: alert,
  })));
}
