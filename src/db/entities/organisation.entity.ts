import { randomUUID } from 'node:crypto';
import { Entity, OptionalProps, PrimaryKey, Property } from '@mikro-orm/core';

@Entity({ tableName: 'organisation' })
export class Organisation {
  [OptionalProps]?: 'createdAt' | 'subscriptionExpiresOn';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @Property({ type: 'text' })
  name!: string;

  /** Last UTC day the subscription is valid (YYYY-MM-DD); null = open-ended. */
  @Property({ type: 'date', nullable: true })
  subscriptionExpiresOn: string | null = null;

  @Property({ type: 'timestamptz' })
  createdAt: Date = new Date();
}
