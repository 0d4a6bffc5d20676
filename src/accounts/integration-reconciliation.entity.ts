import { Entity, ManyToOne, PrimaryKey, Property } from '@mikro-orm/core';
import type { Platform } from '../domain/platforms';
import type { ReconcileResult } from '../domain/reconciliation';
import { Organisation } from './organisation.entity';

/**
 * An integration's missed-webhook reconciliation (decisions §15): the platform's read-only order-API
 * credentials (a sealed JSON object, never returned), where its API is, and what the runs found.
 * Written by raw SQL only (src/accounts/reconciliation-store.ts).
 */
@Entity({ tableName: 'integration_reconciliation' })
export class IntegrationReconciliation {
  @ManyToOne(() => Organisation, { primary: true, deleteRule: 'cascade' })
  organisation!: Organisation;

  @PrimaryKey({ type: 'text' })
  platform!: Platform;

  @Property({ type: 'boolean' })
  enabled!: boolean;

  /** An origin (`https://host[:port]`); the service adds the platform's API path. */
  @Property({ type: 'text' })
  apiBaseUrl!: string;

  @Property({ type: 'text' })
  credentials!: string;

  /** When the platform refused the credentials (401/403); null while it runs. */
  @Property({ type: 'timestamptz', nullable: true })
  pausedAt!: Date | null;

  @Property({ type: 'text', nullable: true })
  pausedReason!: string | null;

  /** The newest change time among the orders read so far; a run reads from an hour before it. */
  @Property({ type: 'timestamptz', nullable: true })
  highWaterMark!: Date | null;

  @Property({ type: 'timestamptz', nullable: true })
  lastRunAt!: Date | null;

  @Property({ type: 'json', nullable: true })
  lastResult!: ReconcileResult | null;

  @Property({ type: 'timestamptz' })
  updatedAt!: Date;
}
