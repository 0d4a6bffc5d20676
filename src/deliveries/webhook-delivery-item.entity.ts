import { randomUUID } from 'node:crypto';
import { Entity, Index, ManyToOne, OptionalProps, PrimaryKey, Property, type Rel } from '@mikro-orm/core';
import type { HeldLine } from '../domain/held-line';
import type { ItemOutcome } from '../domain/statuses';
import { Product } from '../catalogue/product.entity';
import type { Purchase } from '../purchases/purchase-store';
import { WebhookDelivery } from './webhook-delivery.entity';

/** One order line of a delivery and what became of it. */
@Entity({ tableName: 'webhook_delivery_item' })
// The outbox counts the runs in the engine from the marked items without an outcome (src/deliveries/engine-runs-store).
@Index({
  name: 'webhook_delivery_item_in_engine_index',
  expression: 'create index "webhook_delivery_item_in_engine_index" on "webhook_delivery_item" ("delivery_id") where "outcome" is null and "run_started_at" is not null',
})
// ... and the runs each organisation started lately.
@Index({
  name: 'webhook_delivery_item_run_started_index',
  expression: 'create index "webhook_delivery_item_run_started_index" on "webhook_delivery_item" ("run_started_at") where "run_started_at" is not null',
})
export class WebhookDeliveryItem {
  [OptionalProps]?: 'product' | 'outcome' | 'reason' | 'purchase' | 'workflowId' | 'sku' | 'heldLine' | 'runStartedAt';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => WebhookDelivery, { deleteRule: 'cascade', index: true })
  delivery!: Rel<WebhookDelivery>;

  @Property({ type: 'integer' })
  lineIndex!: number;

  /** As sent by the platform; null when the line carried none. */
  @Property({ type: 'text', nullable: true })
  sku: string | null = null;

  @ManyToOne(() => Product, { nullable: true, deleteRule: 'set null' })
  product: Product | null = null;

  /** Null while its fulfilment runs. */
  @Property({ type: 'text', nullable: true })
  outcome: ItemOutcome | null = null;

  @Property({ type: 'text', nullable: true })
  reason: string | null = null;

  @ManyToOne('Purchase', { nullable: true, deleteRule: 'set null' })
  purchase: Purchase | null = null;

  @Property({ type: 'text', nullable: true })
  workflowId: string | null = null;

  /** When the dispatcher started (or joined) its run; with no outcome yet, the run is at work in the engine. */
  @Property({ type: 'timestamptz', nullable: true })
  runStartedAt: Date | null = null;

  /**
   * An `unmatched` line keeps what its fulfilment needs (customer, amount, currency), so that once
   * its SKU is mapped it can be delivered as the webhook would have (decisions §12).
   */
  @Property({ type: 'json', nullable: true })
  heldLine: HeldLine | null = null;
}
