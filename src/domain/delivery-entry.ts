/**
 * A webhook delivery log entry and its items as the front door plans them (decisions §5), before
 * they are recorded: the planner of `src/webhooks/intake-plan.ts` builds them, the delivery log
 * (`src/services/delivery-log.ts`) turns them into rows.
 */
import type { HeldLine } from './held-line';
import type { Platform } from './platforms';
import type { DeliveryKind, ItemOutcome } from './statuses';

export interface NewItem {
  id: string;
  sku: string | null;
  productId: string | null;
  /** Null for a line that a workflow fulfils; its outcome is reported later. */
  outcome: ItemOutcome | null;
  reason: string | null;
  workflowId: string | null;
  /** An `unmatched` line with a SKU: what delivering it after the SKU is mapped needs. */
  heldLine?: HeldLine;
}

export interface NewEntry {
  id: string;
  kind: DeliveryKind;
  platform: Platform;
  externalOrderId: string;
  /** The platform's id of a refund or dispute event (see NormalizedRevocation), or null. */
  eventId: string | null;
  test: boolean;
  items: NewItem[];
  /** Every workflow that works for this entry (fulfilment runs, the alert run). */
  workflowIds: string[];
}
