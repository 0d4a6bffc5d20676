import { Entity, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/core';
import type { SentEventType } from '../domain/outbound-events';
import { WebhookEndpoint } from './webhook-endpoint.entity';

/**
 * One request sent to an endpoint, as the attempts log shows it. Pings have no event row, so the
 * event id is kept as text without a foreign key; housekeeping deletes attempts with their events.
 */
@Entity({ tableName: 'outbound_attempt' })
@Index({ properties: ['endpoint', 'at'] })
export class OutboundAttempt {
  @PrimaryKey({ type: 'uuid' })
  id!: string;

  @ManyToOne(() => WebhookEndpoint, { deleteRule: 'cascade' })
  endpoint!: WebhookEndpoint;

  @Property({ type: 'text' })
  eventId!: string;

  @Property({ type: 'text' })
  type!: SentEventType;

  @Property({ type: 'integer' })
  attempt!: number;

  @Property({ type: 'timestamptz' })
  at!: Date;

  /** The HTTP status; null when no answer came. */
  @Property({ type: 'integer', nullable: true })
  status!: number | null;

  @Property({ type: 'text', nullable: true })
  error!: string | null;

  @Property({ type: 'integer' })
  durationMs!: number;

  /** The answer's first 1 KB, as text. */
  @Property({ type: 'text' })
  responseExcerpt!: string;
}
