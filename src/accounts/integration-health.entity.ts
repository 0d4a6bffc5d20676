import { ArrayType, Entity, ManyToOne, PrimaryKey, Property } from '@mikro-orm/core';
import type { RefusalReason } from '../domain/integration-health';
import type { Platform } from '../domain/platforms';
import { Organisation } from './organisation.entity';

/**
 * An integration's health (decisions §15): its last verified delivery, its last refusal and why,
 * and 24 hourly slots of counts (slot i counts the hour `hour_slots[i]`, an hour number since the
 * epoch; see src/accounts/integration-health-store.ts). One row per organisation and platform,
 * written by raw SQL only; refused bodies are never kept.
 */
@Entity({ tableName: 'integration_health' })
export class IntegrationHealth {
  @ManyToOne(() => Organisation, { primary: true, deleteRule: 'cascade' })
  organisation!: Organisation;

  @PrimaryKey({ type: 'text' })
  platform!: Platform;

  @Property({ type: 'timestamptz', nullable: true })
  lastVerifiedAt!: Date | null;

  @Property({ type: 'timestamptz', nullable: true })
  lastRefusedAt!: Date | null;

  @Property({ type: 'text', nullable: true })
  lastRefusalReason!: RefusalReason | null;

  @Property({ type: new ArrayType<number>(Number), columnType: 'int[]' })
  hourSlots!: number[];

  @Property({ type: new ArrayType<number>(Number), columnType: 'int[]' })
  verifiedSlots!: number[];

  @Property({ type: new ArrayType<number>(Number), columnType: 'int[]' })
  refusedSlots!: number[];
}
