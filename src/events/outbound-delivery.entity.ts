import { Entity, Index, ManyToOne, Property } from '@mikro-orm/core';
import type { DeliveryState } from '../domain/outbound-events';
import { OutboundEvent } from './outbound-event.entity';
import { WebhookEndpoint } from './webhook-endpoint.entity';

/** The delivery of one event to one endpoint: written with the event, moved on by its run. */
@Entity({ tableName: 'outbound_delivery' })
@Index({ properties: ['endpoint', 'state'] })
export class OutboundDelivery {
  @ManyToOne(() => OutboundEvent, { primary: true, deleteRule: 'cascade' })
  event!: OutboundEvent;

  @ManyToOne(() => WebhookEndpoint, { primary: true, deleteRule: 'cascade' })
  endpoint!: WebhookEndpoint;

  @Property({ type: 'text' })
  state!: DeliveryState;

  @Property({ type: 'integer' })
  attempts!: number;

  @Property({ type: 'timestamptz' })
  updatedAt!: Date;
}
