import { Entity, ManyToOne, PrimaryKey, Property } from '@mikro-orm/core';
import type { EventType } from '../domain/outbound-events';
import { Organisation } from '../accounts/organisation.entity';

/**
 * An integrator's endpoint for outbound events (decisions §13). Written and read by
 * src/events/outbound-events.ts only; the triggers of the outbound-events migration read it to fan
 * an event out to the endpoints subscribed.
 */
@Entity({ tableName: 'webhook_endpoint' })
export class WebhookEndpoint {
  @PrimaryKey({ type: 'uuid' })
  id!: string;

  @ManyToOne(() => Organisation, { deleteRule: 'cascade', index: true })
  organisation!: Organisation;

  @Property({ type: 'text' })
  url!: string;

  /** Event types subscribed; empty: all. */
  @Property({ type: 'json' })
  events!: EventType[];

  @Property({ type: 'text' })
  description!: string;

  @Property({ type: 'boolean' })
  enabled!: boolean;

  /** `whsec_…`, sealed with the key ring like integration secrets. */
  @Property({ type: 'text' })
  secret!: string;

  /** The secret before the last rotation, sealed: it still signs until `previousSecretUntil`. */
  @Property({ type: 'text', nullable: true })
  previousSecret!: string | null;

  @Property({ type: 'timestamptz', nullable: true })
  previousSecretUntil!: Date | null;

  /** The first failed attempt since the last success; null while the endpoint answers. */
  @Property({ type: 'timestamptz', nullable: true })
  failingSince!: Date | null;

  /** Why deliveries disabled it (410, failing too long); null when enabled or disabled by hand. */
  @Property({ type: 'text', nullable: true })
  disabledReason!: string | null;

  @Property({ type: 'timestamptz' })
  createdAt!: Date;
}
