import { randomUUID } from 'node:crypto';
import { Entity, OptionalProps, PrimaryKey, Property } from '@mikro-orm/core';

@Entity({ tableName: 'organisation' })
export class Organisation {
  [OptionalProps]?: 'createdAt' | 'subscriptionExpiresOn' | 'supportEmail';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @Property({ type: 'text' })
  name!: string;

  /** Last UTC day the subscription is valid (YYYY-MM-DD); null = open-ended. */
  @Property({ type: 'date', nullable: true })
  subscriptionExpiresOn: string | null = null;

  /** Where buyers are told to write when a download limit is reached (decisions §10); optional. */
  @Property({ type: 'text', nullable: true })
  supportEmail: string | null = null;

  @Property({ type: 'timestamptz' })
  createdAt: Date = new Date();
}
