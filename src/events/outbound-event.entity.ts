import { Entity, Index, ManyToOne, OptionalProps, PrimaryKey, Property } from '@mikro-orm/core';
import type { EventType } from '../domain/outbound-events';
import { Organisation } from '../accounts/organisation.entity';

/**
 * One outbound event (decisions §13), written by the triggers of the outbound-events migration in
 * the transaction of the change it describes; read by src/events/outbound-events.ts. Its `data`
 * is rendered from `subjectRow` (purchases) or `subjectId` the first time it is sent or listed,
 * then kept, so every attempt and every reader sees the same body.
 */
@Entity({ tableName: 'outbound_event' })
@Index({ properties: ['organisation', 'id'] })
@Index({ properties: ['organisation', 'transactionId', 'id'] })
export class OutboundEvent {
  [OptionalProps]?: 'transactionId';

  /** `evt_…`, sorting by time. */
  @PrimaryKey({ type: 'text' })
  id!: string;

  @ManyToOne(() => Organisation, { deleteRule: 'cascade' })
  organisation!: Organisation;

  @Property({ type: 'text' })
  type!: EventType;

  /** The purchase, activity log entry or delivery log entry it is about. */
  @Property({ type: 'uuid' })
  subjectId!: string;

  /** A purchase's row as it was at the event (purchases change after their events); null for other subjects. */
  @Property({ type: 'json', nullable: true })
  subjectRow!: unknown;

  @Property({ type: 'json', nullable: true })
  data!: unknown;

  @Property({ type: 'timestamptz', index: true })
  createdAt!: Date;

  /**
   * The writing transaction's id: the events API lists only events of transactions older than every
   * transaction still running, in this order, so an event committed late is never passed over.
   */
  @Property({ columnType: 'xid8', defaultRaw: 'pg_current_xact_id()' })
  transactionId!: string;
}
