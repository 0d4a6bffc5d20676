import { Entity, Index, PrimaryKey, Property } from '@mikro-orm/core';
import type { DispatchKind } from '../../domain/dispatch';

/**
 * The transactional outbox (decisions §4, amended): one row per workflow start or signal that a
 * recorded request still owes Temporal. Written in the same transaction as what it is for, claimed by
 * any API process's dispatcher (`for update skip locked`), deleted once Temporal has taken it.
 */
@Entity({ tableName: 'workflow_dispatch' })
@Index({ properties: ['dueAt'] })
export class WorkflowDispatch {
  @PrimaryKey({ type: 'uuid' })
  id!: string;

  /** Null for requests that belong to no organisation yet (a /my request names an email only). */
  @Property({ type: 'uuid', nullable: true })
  organisationId!: string | null;

  @Property({ type: 'text' })
  kind!: DispatchKind;

  @Property({ type: 'text' })
  workflowId!: string;

  /** The start arguments (and signal) of the workflow, as the dispatcher passes them. */
  @Property({ type: 'json' })
  payload!: unknown;

  @Property({ type: 'timestamptz' })
  createdAt!: Date;

  /** Not before this moment: pushed back with jitter while Temporal refuses or is unreachable. */
  @Property({ type: 'timestamptz' })
  dueAt!: Date;

  @Property({ type: 'integer', default: 0 })
  attempts!: number;

  @Property({ type: 'text', nullable: true })
  lastError!: string | null;

  /** The W3C `traceparent` of the request that recorded the row, so its dispatch joins that trace. */
  @Property({ type: 'text', nullable: true })
  traceParent!: string | null;
}
