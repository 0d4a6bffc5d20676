import { Entity, ManyToOne, PrimaryKey, Property } from '@mikro-orm/core';
import { WebhookEndpoint } from './webhook-endpoint.entity';

/**
 * One of an endpoint's request slots, held by one attempt in whichever worker process sends it
 * (decisions §13: at most 10 requests in flight per endpoint, whatever the number of workers). A
 * holder that dies leaves its lease to expire: `until` is past the attempt's own timeout.
 */
@Entity({ tableName: 'outbound_endpoint_lease' })
export class OutboundEndpointLease {
  @ManyToOne(() => WebhookEndpoint, { primary: true, deleteRule: 'cascade' })
  endpoint!: WebhookEndpoint;

  @PrimaryKey({ type: 'integer' })
  slot!: number;

  @Property({ type: 'uuid' })
  holder!: string;

  @Property({ type: 'timestamptz' })
  until!: Date;
}
