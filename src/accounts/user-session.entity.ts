import { Entity, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/core';
import { User } from './user.entity';

/**
 * A signed-in dashboard session, so that the server can end it: sign-out, "sign out everywhere", a
 * password change and the idle timeout delete the row, and the cookie naming it stops working.
 */
@Entity({ tableName: 'user_session' })
export class UserSession {
  /** The random id the signed session cookie carries. */
  @PrimaryKey({ type: 'text' })
  id!: string;

  @ManyToOne(() => User, { deleteRule: 'cascade', index: true })
  user!: User;

  @Property({ type: 'timestamptz' })
  createdAt!: Date;

  @Index()
  @Property({ type: 'timestamptz' })
  lastSeenAt!: Date;

  @Property({ type: 'text', nullable: true })
  userAgent: string | null = null;
}
