import { Entity, Index, PrimaryKey, Property } from '@mikro-orm/core';
import type { DispatchKind } from '../domain/dispatch';
import { CLAIM_INDEX } from './outbox-store';

/**
 * The transactional outbox (decisions §4, amended): one row per workflow start or signal that a
 * recorded request still owes Temporal. Written in the same transaction as what it is for, claimed by
 * any API process's dispatcher (`for update skip locked`), deleted once Temporal has taken it.
 */
@Entity({ tableName: 'workflow_dispatch' })
// Claims read live rows per organisation, its bulk lane last, oldest first (partial: dead letters stay out).
@Index({ name: 'workflow_dispatch_claim_index', expression: CLAIM_INDEX })
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

  /** Refusals by the engine (not its absence), counted toward DISPATCH_MAX_REFUSALS. */
  @Property({ type: 'integer', default: 0 })
  refusals!: number;

  @Property({ type: 'text', nullable: true })
  lastError!: string | null;

  /** A dead letter since then: refused for good, or too often; never claimed again (last_error says why). */
  @Property({ type: 'timestamptz', nullable: true })
  deadAt!: Date | null;

  /** The W3C `traceparent` of the request that recorded the row, so its dispatch joins that trace. */
  @Property({ type: 'text', nullable: true })
  traceParent!: string | null;
}
