import type { EntityManager } from '@mikro-orm/postgresql';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { EmailKind, EmailStatus } from '../src/db/entities/sent-email.entity';
import { isPermanentSmtpFailure, SmtpFailure } from '../src/mail/mailer';
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

type Attempt = { error?: SmtpFailure; permanent?: string };

interface SentRow {
  id: string;
  status: EmailStatus;
  error: string | null;
}

/**
 * Sends one email at most once per business key: a retry after a success sends nothing. A 5xx
 * rejection is permanent (non-retryable, also for any later attempt with that key); anything else
 * is thrown as is, so Temporal retries it within the caller's window.
 *
 * `exclusive` is for keys that two activities may send at the same time (two runs alerting about
 * one order): the key's row stays locked while the message goes out, so only one sends it. Other
 * keys name one attempt, which Temporal never runs twice at once; they hold no connection during
 * SMTP (holding one per send would tie the database pool to the mail relay's speed), and cost two
 * statements: claim-and-read, then the result.
 */
export function createSendOnce({ orm, mailer }: Pick<ActivityDeps, 'orm' | 'mailer'>): SendOnce {
  async function attempt(em: EntityManager, log: SentRow, recipients: string[], render: (em: EntityManager) => Promise<RenderedMail>): Promise<Attempt> {
    if (log.status === 'sent') return {};
    if (log.status === 'failed') return { permanent: log.error ?? 'refused by the mail server' };
    const mail = await render(em);
    let outcome: { status: EmailStatus; messageId: string | null; error: string | null };
    let result: Attempt = {};
    try {
      const { messageId } = await mailer.send({ to: recipients, ...mail });
      outcome = { status: 'sent', messageId, error: null };
    } catch (error) {
      if (!(error instanceof SmtpFailure)) throw error;
      const permanent = isPermanentSmtpFailure(error);
      outcome = { status: permanent ? 'failed' : 'sending', messageId: null, error: error.message };
      result = permanent ? { permanent: error.message } : { error };
    }
    await em.execute(
      `update sent_email set subject = ?, status = ?, message_id = ?, error = ?,
         sent_at = case when ? = 'sent' then now() else sent_at end
       where id = ?`,
      [mail.subject, outcome.status, outcome.messageId, outcome.error, outcome.status, log.id],
    );
    return result;
  }

  return async (businessKey, kind, orgId, recipients, render, options = {}) => {
    const claim = [orgId, kind, businessKey, JSON.stringify(recipients)];
    const claimSql = `insert into sent_email (id, organisation_id, kind, business_key, recipients, subject, status, created_at)
      values (gen_random_uuid(), ?, ?, ?, ?, '', 'sending', now()) on conflict (business_key) do nothing`;
    let result: Attempt;
    if (options.exclusive) {
      result = await orm.em.fork().transactional(async (tx) => {
        await tx.execute(claimSql, claim);
        const [log] = await tx.execute<SentRow[]>('select id, status, error from sent_email where business_key = ? for update', [businessKey]);
        return attempt(tx, log, recipients, render);
      });
    } else {
      const em = orm.em.fork();
      const [log] = await em.execute<SentRow[]>(
        `with claimed as (${claimSql} returning id, status, error)
         select id, status, error from claimed
         union all
         select id, status, error from sent_email where business_key = ? and not exists (select 1 from claimed)`,
        [...claim, businessKey],
      );
      result = await attempt(em, log, recipients, render);
    }
    if (result.permanent !== undefined) throw ApplicationFailure.nonRetryable(result.permanent, 'PermanentSmtpFailure');
    if (result.error !== undefined) {
      Context.current().log.warn('temporary SMTP failure, will retry', { businessKey, message: result.error.message });
      throw result.error;
    }
  };
}
