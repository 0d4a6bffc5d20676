import { randomUUID } from 'node:crypto';
import { Entity, ManyToOne, OptionalProps, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import type { Platform } from '../domain/platforms';
import { Organisation } from './organisation.entity';

/** One sales platform's secrets for one organisation (Settings, Integrations). */
@Entity({ tableName: 'integration' })
@Unique({ properties: ['organisation', 'platform'] })
export class Integration {
  [OptionalProps]?: 'updatedAt' | 'secret' | 'privateKey' | 'accountId';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => Organisation, { deleteRule: 'cascade' })
  organisation!: Organisation;

  @Property({ type: 'text' })
  platform!: Platform;

  /** Kept in clear: signature checks need the secret itself. Never returned by the API. */
  @Property({ type: 'text', nullable: true })
  secret: string | null = null;

  @Property({ type: 'text', nullable: true })
  privateKey: string | null = null;

  /** payments-c: the account id its events carry, to find the organisation. */
  @Property({ type: 'text', nullable: true, index: true })
  accountId: string | null = null;

  @Property({ type: 'timestamptz', onUpdate: () => new Date() })
  updatedAt: Date = new Date();
}
