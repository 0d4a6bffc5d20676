import { randomUUID } from 'node:crypto';
import { Entity, ManyToOne, OptionalProps, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { Organisation } from './organisation.entity';

@Entity({ tableName: 'customer' })
@Unique({ properties: ['organisation', 'email'] })
export class Customer {
  [OptionalProps]?: 'createdAt' | 'name';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => Organisation, { deleteRule: 'cascade' })
  organisation!: Organisation;

  /** Trimmed and lower-case, so one person is one customer per organisation. */
  @Property({ type: 'text' })
  email!: string;

  @Property({ type: 'text' })
  name: string = '';

  @Property({ type: 'timestamptz' })
  createdAt: Date = new Date();
}
