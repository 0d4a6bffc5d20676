import { Entity, Index, PrimaryKey, Property } from '@mikro-orm/core';

/** Fixed-window counters shared by every API process (rate limits of /my and sign-in). */
@Entity({ tableName: 'rate_limit_counter' })
export class RateLimitCounter {
  @PrimaryKey({ type: 'text' })
  key!: string;

  @Property({ type: 'integer' })
  count!: number;

  /** Housekeeping deletes the counters whose window has passed. */
  @Index()
  @Property({ type: 'timestamptz' })
  resetAt!: Date;
}
