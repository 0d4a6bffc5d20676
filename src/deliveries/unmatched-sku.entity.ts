import { randomUUID } from 'node:crypto';
import { Entity, ManyToOne, OptionalProps, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import type { Platform } from '../domain/platforms';
import { Organisation } from '../accounts/organisation.entity';

/** The Purchases page counter: one count per `unmatched` item, per platform and SKU. */
@Entity({ tableName: 'unmatched_sku' })
@Unique({ properties: ['organisation', 'platform', 'sku'] })
export class UnmatchedSku {
  [OptionalProps]?: 'count' | 'lastSeenAt';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => Organisation, { deleteRule: 'cascade' })
  organisation!: Organisation;

  @Property({ type: 'text' })
  platform!: Platform;

  /** As sent ('' when the line carried no SKU). */
  @Property({ type: 'text' })
  sku!: string;

  @Property({ type: 'integer' })
  count: number = 0;

  @Property({ type: 'timestamptz' })
  lastSeenAt: Date = new Date();
}
