/**
 * The sent-email ledger: owns `sent_email`, one row per business key (a receipt, a link, an alert,
 * an update notice, a reminder), claimed before the message goes out and given the relay's answer after.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { isoUtc, sql, statement, type NoRows, type Parameters } from '../db/sql';
import { reminderBusinessKey } from '../domain/reminder';
import type { EmailKind, EmailStatus } from './sent-email.entity';

/** A ledger row as a send reads it. */
export interface SentEmailRow {
  id: string;
  status: EmailStatus;
  error: string | null;
}

interface Claim {
  orgId: string;
  kind: EmailKind;
  businessKey: string;
  /** JSON array of addresses. */
  recipients: string;
}

/** Claims the key's row (`sending`), unless another send claimed it first. */
const claimInsert = (p: Parameters<Claim>) => sql`insert into sent_email (id, organisation_id, kind, business_key, recipients, subject, status, created_at)
      values (gen_random_uuid(), ${p.orgId}, ${p.kind}, ${p.businessKey}, ${p.recipients}::jsonb, '', 'sending', now()) on conflict (business_key) do nothing`;

const claim = statement<NoRows, Claim>({}, (p) => claimInsert(p));

const lockedRow = statement<SentEmailRow, { businessKey: string }>(
  { id: true, status: true, error: true },
  (p) => sql`select id, status, error from sent_email where business_key = ${p.businessKey} for update`,
);

const claimAndRead = statement<SentEmailRow, Claim>(
  { id: true, status: true, error: true },
  (p) => sql`with claimed as (${claimInsert(p)} returning id, status, error)
         select id, status, error from claimed
         union all
         select id, status, error from sent_email where business_key = ${p.businessKey} and not exists (select 1 from claimed)`,
);

/** The key's row, claimed if new and locked for the caller's transaction (an exclusive send). */
export async function claimLocked(tx: EntityManager, key: { orgId: string; kind: EmailKind; businessKey: string; recipients: string[] }): Promise<SentEmailRow> {
  const params = { ...key, recipients: JSON.stringify(key.recipients) };
  await claim.run(tx, params);
  return (await lockedRow.first(tx, { businessKey: key.businessKey }))!;
}

/** The key's row, claimed if new, in one statement (no lock is kept). */
export async function claimRow(em: EntityManager, key: { orgId: string; kind: EmailKind; businessKey: string; recipients: string[] }): Promise<SentEmailRow> {
  return (await claimAndRead.first(em, { ...key, recipients: JSON.stringify(key.recipients) }))!;
}

const recordSend = statement<NoRows, { subject: string; status: EmailStatus; messageId: string | null; error: string | null; id: string }>(
  {},
  (p) => sql`update sent_email set subject = ${p.subject}, status = ${p.status}, message_id = ${p.messageId}, error = ${p.error},
         sent_at = case when ${p.status} = 'sent' then now() else sent_at end
       where id = ${p.id}`,
);

/** What a send left: the message's subject and the relay's answer (`sent_at` when it went out). */
export async function recordSendOutcome(
  em: EntityManager, id: string, outcome: { subject: string; status: EmailStatus; messageId: string | null; error: string | null },
): Promise<void> {
  await recordSend.run(em, { subject: outcome.subject, status: outcome.status, messageId: outcome.messageId, error: outcome.error, id });
}

const giveUpUpdates = statement<NoRows, { error: string; keys: string[] }>(
  {},
  (p) => sql`update sent_email set status = 'failed', error = ${p.error}
     where kind = 'update' and status = 'sending' and business_key = any(${p.keys}::text[])`,
);

/** Update notices of these keys still `sending`: logged failed with the reason. */
export async function failSendingNotices(em: EntityManager, keys: string[], error: string): Promise<void> {
  await giveUpUpdates.run(em, { error, keys });
}

const organisationMessageIds = statement<{ message_id: string }, { orgId: string; messageIds: string[] }>(
  { message_id: true },
  (p) => sql`select message_id from sent_email where organisation_id = ${p.orgId} and message_id = any(${p.messageIds}::text[])`,
);

/** Which of these Message-IDs the organisation's mail carried. */
export async function messageIdsSentFor(em: EntityManager, orgId: string, messageIds: string[]): Promise<string[]> {
  return (await organisationMessageIds.rows(em, { orgId, messageIds })).map((r) => r.message_id);
}

/** A receipt's ledger row, as the dispute evidence record lists it. */
export interface ReceiptRow {
  status: string;
  sent_at: string | null;
  message_id: string | null;
  recipients: string[];
  subject: string;
}

const receiptsOfPurchase = statement<ReceiptRow, { keyPattern: string }>(
  { status: true, sent_at: true, message_id: true, recipients: true, subject: true },
  (p) => sql`select status, ${isoUtc('sent_at')} as sent_at, message_id, recipients, subject from sent_email
     where business_key like ${p.keyPattern} order by created_at`,
);

/** A purchase's receipts (every attempt's key), oldest first. */
export function receiptRows(em: EntityManager, purchaseId: string): Promise<ReceiptRow[]> {
  return receiptsOfPurchase.rows(em, { keyPattern: `receipt:${purchaseId}:%` });
}

const reminderOfPurchase = statement<ReceiptRow, { businessKey: string }>(
  { status: true, sent_at: true, message_id: true, recipients: true, subject: true },
  (p) => sql`select status, ${isoUtc('sent_at')} as sent_at, message_id, recipients, subject from sent_email where business_key = ${p.businessKey}`,
);

/** A purchase's reminder (decisions §16), as the evidence lists it: at most one row. */
export function reminderRows(em: EntityManager, purchaseId: string): Promise<ReceiptRow[]> {
  return reminderOfPurchase.rows(em, { businessKey: reminderBusinessKey(purchaseId) });
}
