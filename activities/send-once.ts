import type { EntityManager } from '@mikro-orm/postgresql';
import { ApplicationFailure, Context, sleep } from '@temporalio/activity';
import type { EmailKind, EmailStatus } from '../src/deliveries/sent-email.entity';
import { claimLocked, claimRow, recordSendOutcome, type SentEmailRow } from '../src/deliveries/mail-ledger-store';
import { isDatabaseUnavailable } from '../src/db/unavailable';
import { isPermanentSmtpFailure, messageIdFor, SmtpFailure } from '../src/mail/mailer';
import type { RenderedMail } from '../src/mail/templates';
import type { ActivityDeps } from './deps';

export type SendOnce = (
  businessKey: string,
  kind: EmailKind,
  orgId: string,
  recipients: string[],
  render: (em: EntityManager) => Promise<RenderedMail>,
  options?: { exclusive?: boolean },
) => Promise<void>;

type SentRow = SentEmailRow;

/** The failure type of an email the relay refused for good (5xx): not retried. */
export const PERMANENT_SMTP_FAILURE = 'PermanentSmtpFailure';

/** What one send leaves in the log row: the message's subject, and the relay's answer. */
interface Outcome {
  subject: string;
  status: EmailStatus;
  messageId: string | null;
  error: string | null;
  /** A temporary SMTP failure, thrown as is once recorded (Temporal retries the activity). */
  temporary?: unknown;
}

/**
 * How long the result of a send is retried while PostgreSQL is out of reach (a restart takes
 * seconds), and the longest wait between two tries: within the email activities' one-minute
 * start-to-close timeout.
 */
const RECORD_RETRY_MS = 30_000;
const RECORD_RETRY_MAX_WAIT_MS = 2_000;

/**
 * Sends one email at most once per business key: a retry after a success sends nothing. A 5xx
 * rejection is permanent (non-retryable, also for any later attempt with that key); anything else
 * is thrown as is, so Temporal retries it within the caller's window. The Message-ID is the key's
 * (`messageIdFor`), so a message sent again is the same message to mail systems.
 *
 * `exclusive` is for keys that two activities may send at the same time (two runs alerting about
 * one order): the key's row stays locked while the message goes out, so only one sends it. Other
 * keys name one attempt, which Temporal never runs twice at once; they hold no connection during
 * SMTP (holding one per send would tie the database pool to the mail relay's speed), and cost two
 * statements: claim-and-read, then the result. That result is tried again while PostgreSQL is out
 * of reach (issue 23, M6): given up, the row would stay `sending` and the activity's retry would
 * send the message again. An exclusive key's result is written in its transaction, which a restart
 * ends; its retry sends again, under the same Message-ID.
 */
export function createSendOnce({ orm, mailer, config }: Pick<ActivityDeps, 'orm' | 'mailer' | 'config'>): SendOnce {
  const host = new URL(config.downloadLinks.siteUrl).hostname;

  /** Sends unless the log row says it went out or was refused for good (then undefined). */
  async function send(
    em: EntityManager,
    log: SentRow,
    key: { businessKey: string; kind: EmailKind },
    recipients: string[],
    render: (em: EntityManager) => Promise<RenderedMail>,
  ): Promise<Outcome | undefined> {
    if (log.status !== 'sending') return undefined;
    const mail = await render(em);
    try {
      const { messageId } = await mailer.send({ to: recipients, ...mail, messageId: messageIdFor(key.kind, key.businessKey, host) });
      return { subject: mail.subject, status: 'sent', messageId, error: null };
    } catch (error) {
      if (!(error instanceof SmtpFailure)) throw error;
      const permanent = isPermanentSmtpFailure(error);
      return {
        subject: mail.subject,
        status: permanent ? 'failed' : 'sending',
        messageId: null,
        error: error.message,
        temporary: permanent ? undefined : error,
      };
    }
  }

  function record(em: EntityManager, log: SentRow, outcome: Outcome): Promise<unknown> {
    return recordSendOutcome(em, log.id, outcome);
  }

  /** `record` on the pool, tried again for RECORD_RETRY_MS while PostgreSQL is out of reach. */
  async function recordDurably(em: EntityManager, log: SentRow, outcome: Outcome, businessKey: string): Promise<void> {
    const giveUpAt = Date.now() + RECORD_RETRY_MS;
    for (let wait = 100; ; wait = Math.min(wait * 2, RECORD_RETRY_MAX_WAIT_MS)) {
      try {
        await record(em, log, outcome);
        return;
      } catch (error) {
        if (!isDatabaseUnavailable(error) || Date.now() + wait > giveUpAt) throw error;
        Context.current().log.warn('database unavailable, will record the send again', { businessKey, code: (error as { code?: string }).code });
        await sleep(wait);
      }
    }
  }

  return async (businessKey, kind, orgId, recipients, render, options = {}) => {
    const key = { businessKey, kind };
    const claim = { orgId, kind, businessKey, recipients };
    let log: SentRow;
    let outcome: Outcome | undefined;
    if (options.exclusive) {
      ({ log, outcome } = await orm.em.fork().transactional(async (tx) => {
        const row = await claimLocked(tx, claim);
        const sent = await send(tx, row, key, recipients, render);
        if (sent) await record(tx, row, sent);
        return { log: row, outcome: sent };
      }));
    } else {
      const em = orm.em.fork();
      log = await claimRow(em, claim);
      outcome = await send(em, log, key, recipients, render);
      if (outcome) await recordDurably(em, log, outcome, businessKey);
    }
    if (outcome === undefined) {
      // Sent or refused for good by an earlier attempt with this key.
      if (log.status === 'failed') throw ApplicationFailure.nonRetryable(log.error ?? 'refused by the mail server', PERMANENT_SMTP_FAILURE);
      return;
    }
    if (outcome.status === 'failed') throw ApplicationFailure.nonRetryable(outcome.error ?? 'refused by the mail server', PERMANENT_SMTP_FAILURE);
    if (outcome.temporary !== undefined) {
      Context.current().log.warn('temporary SMTP failure, will retry', { businessKey, message: outcome.error });
      throw outcome.temporary;
    }
  };
}
