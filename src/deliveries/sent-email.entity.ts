import { randomUUID } from 'node:crypto';
import { Entity, ManyToOne, OptionalProps, PrimaryKey, Property } from '@mikro-orm/core';
import { Organisation } from '../accounts/organisation.entity';

export const EMAIL_KINDS = ['receipt', 'links', 'alert', 'update', 'reminder'] as const;
export type EmailKind = (typeof EMAIL_KINDS)[number];
export const EMAIL_STATUSES = ['sending', 'sent', 'failed'] as const;
export type EmailStatus = (typeof EMAIL_STATUSES)[number];

/**
 * The sent-email log. `businessKey` is unique (`receipt:<purchaseId>:<n>`, `alert:<org>:<platform>:<order>`
 * ...), which is what makes a retried send activity idempotent.
 */
@Entity({ tableName: 'sent_email' })
export class SentEmail {
  [OptionalProps]?: 'createdAt' | 'sentAt' | 'status' | 'messageId' | 'error' | 'organisation';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => Organisation, { nullable: true, deleteRule: 'cascade' })
  organisation: Organisation | null = null;

  @Property({ type: 'text' })
  kind!: EmailKind;

  @Property({ type: 'text', unique: true })
  businessKey!: string;

  @Property({ type: 'json' })
  recipients!: string[];

  @Property({ type: 'text' })
  subject!: string;

  @Property({ type: 'text' })
  status: EmailStatus = 'sending';

  @Property({ type: 'text', nullable: true })
  messageId: string | null = null;

  @Property({ type: 'text', nullable: true })
  error: string | null = null;

  @Property({ type: 'timestamptz' })
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz', nullable: true })
  sentAt: Date | null = null;
}
