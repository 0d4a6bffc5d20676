import { randomUUID } from 'node:crypto';
import { Collection, Entity, Index, ManyToOne, OneToMany, OptionalProps, PrimaryKey, Property } from '@mikro-orm/core';
import type { Platform } from '../domain/platforms';
import type { DeliveryKind, DeliverySource, DeliveryStatus } from '../domain/statuses';
import { Organisation } from '../accounts/organisation.entity';
import { WebhookDeliveryItem } from './webhook-delivery-item.entity';

/** One received order notification: an entry of the webhook delivery log. */
@Entity({ tableName: 'webhook_delivery' })
@Index({ properties: ['organisation', 'receivedAt'] })
@Index({ properties: ['organisation', 'platform', 'externalOrderId'] })
// The outbox counts an organisation's runs in the engine from its Pending entries (claimDueDispatches).
@Index({ name: 'webhook_delivery_pending_index', expression: 'create index "webhook_delivery_pending_index" on "webhook_delivery" ("organisation_id") where "status" = \'Pending\'' })
@Index({ properties: ['organisation', 'platform', 'eventId'] })
export class WebhookDelivery {
  [OptionalProps]?: 'receivedAt' | 'completedAt' | 'status' | 'unmatched' | 'test' | 'workflowIds' | 'items' | 'kind' | 'eventId' | 'source';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => Organisation, { deleteRule: 'cascade' })
  organisation!: Organisation;

  @Property({ type: 'text' })
  platform!: Platform;

  /** An order, or a refund or dispute event (decisions §9). */
  @Property({ type: 'text' })
  kind: DeliveryKind = 'order';

  /** The order's id; for a payments-c refund or dispute, the payment it names. */
  @Property({ type: 'text' })
  externalOrderId!: string;

  /** The platform's id of a refund or dispute event, the same on its redeliveries; null when it sends none. */
  @Property({ type: 'text', nullable: true })
  eventId: string | null = null;

  /** How the order came: its webhook, or a reconciliation run that found it missing (decisions §15). */
  @Property({ type: 'text' })
  source: DeliverySource = 'webhook';

  @Property({ type: 'text' })
  status: DeliveryStatus = 'Pending';

  @Property({ type: 'boolean' })
  unmatched: boolean = false;

  @Property({ type: 'boolean' })
  test: boolean = false;

  @Property({ type: 'json' })
  workflowIds: string[] = [];

  @Property({ type: 'timestamptz' })
  receivedAt: Date = new Date();

  @Property({ type: 'timestamptz', nullable: true })
  completedAt: Date | null = null;

  @OneToMany(() => WebhookDeliveryItem, (item) => item.delivery, { orderBy: { lineIndex: 'asc' } })
  items = new Collection<WebhookDeliveryItem>(this);
}
