import { randomUUID } from 'node:crypto';
import { BigIntType, Entity, OptionalProps, PrimaryKey, Property } from '@mikro-orm/core';
import { DEFAULT_REMINDER_AFTER_MINUTES } from '../domain/reminder';

@Entity({ tableName: 'organisation' })
export class Organisation {
  [OptionalProps]?: 'catalogueVersion' | 'createdAt' | 'subscriptionExpiresOn' | 'supportEmail' | 'reminderAfterMinutes';

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

  /**
   * How long after a purchase's receipt was accepted its buyer is reminded, when no file transfer
   * completed meanwhile (decisions §16); null: no reminders. Read when a receipt is accepted.
   */
  @Property({ type: 'integer', nullable: true })
  reminderAfterMinutes: number | null = DEFAULT_REMINDER_AFTER_MINUTES;

  /**
   * Counts changes to the organisation's products, their SKUs and versions: database triggers bump it
   * in the same transaction as the change (migration 20261126140000), so whoever reads it knows
   * whether a listing it keeps is still current (GET /api/products).
   */
  @Property({ type: new BigIntType('string'), default: 0 })
  catalogueVersion: string = '0';

  @Property({ type: 'timestamptz' })
  createdAt: Date = new Date();
}
