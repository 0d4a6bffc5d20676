import { randomUUID } from 'node:crypto';
import { Entity, ManyToOne, OptionalProps, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { Organisation } from '../accounts/organisation.entity';

@Entity({ tableName: 'customer' })
@Unique({ properties: ['organisation', 'email'] })
export class Customer {
  [OptionalProps]?: 'createdAt' | 'name' | 'updateNoticesOffAt' | 'noticeToken';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => Organisation, { deleteRule: 'cascade' })
  organisation!: Organisation;

  /** Trimmed and lower-case, so one person is one customer per organisation. */
  @Property({ type: 'text' })
  email!: string;

  @Property({ type: 'text' })
  name: string = '';

  /** Set by the one-click unsubscribe of version update notices (decisions §12): none are sent after. */
  @Property({ type: 'timestamptz', nullable: true })
  updateNoticesOffAt: Date | null = null;

  /** The random token of the unsubscribe link in update notices; made with the first notice. */
  @Property({ type: 'text', nullable: true, unique: true })
  noticeToken: string | null = null;

  @Property({ type: 'timestamptz' })
  createdAt: Date = new Date();
}
