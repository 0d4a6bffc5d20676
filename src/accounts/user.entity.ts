import { randomUUID } from 'node:crypto';
import { Entity, ManyToOne, OptionalProps, PrimaryKey, Property } from '@mikro-orm/core';
import type { Role } from '../domain/statuses';
import { Organisation } from './organisation.entity';

@Entity({ tableName: 'app_user' })
export class User {
  [OptionalProps]?: 'createdAt' | 'name' | 'apiKeyLastUsedAt' | 'organisation';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  /** Null: the user belongs to no organisation, and its key is refused with 403. */
  @ManyToOne(() => Organisation, { nullable: true, deleteRule: 'set null' })
  organisation: Organisation | null = null;

  /** Lower-case; one account per address. */
  @Property({ type: 'text', unique: true })
  email!: string;

  @Property({ type: 'text' })
  name: string = '';

  @Property({ type: 'text' })
  role!: Role;

  /** scrypt, self-describing (`scrypt$N$r$p$salt$hash`). */
  @Property({ type: 'text', hidden: true })
  passwordHash!: string;

  /** SHA-256 of the key (a high-entropy secret needs no slow hash). */
  @Property({ type: 'text', unique: true, hidden: true })
  apiKeyHash!: string;

  /** The first characters of the key, shown on the API Key page. */
  @Property({ type: 'text' })
  apiKeyPrefix!: string;

  @Property({ type: 'timestamptz', nullable: true })
  apiKeyLastUsedAt: Date | null = null;

  @Property({ type: 'timestamptz' })
  createdAt: Date = new Date();
}
