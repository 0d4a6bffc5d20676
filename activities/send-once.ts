import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { SentEmail } from '../src/db/entities';
import type { EmailKind } from '../src/db/entities/sent-email.entity';
import { isPermanentSmtpFailure } from '../src/mail/mailer';
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

type Attempt = { error?: unknown; permanent?: string };

/**
 * Sends one email at most once per business key: a retry after a success sends nothing. A 5xx
 * rejection is permanent (non-retryable, also for any later attempt with that key); anything else
 * is thrown as is, so Temporal retries it within the caller's window.
 *
 * `exclusive` is for keys that two activities may send at the same time (two runs alerting about
 * one order): the key's row stays locked while the message goes out, so only one sends it. Other
 * keys name one attempt, which Temporal never runs twice at once; they hold no connection during
 * SMTP (holding one per send would tie the database pool to the mail relay's speed).
 */
export function createSendOnce({ orm, mailer }: Pick<ActivityDeps, 'orm' | 'mailer'>): SendOnce {
  async function attempt(em: EntityManager, log: SentEmail, recipients: string[], render: (em: EntityManager) => Promise<RenderedMail>): Promise<Attempt> {
    if (log.status === 'sent') return {};
    if (log.status === 'failed') return { permanent: log.error ?? 'refused by the mail server' };
    const mail = await render(em);
    log.subject = mail.subject;
    try {
      const { messageId } = await mailer.send({ to: recipients, ...mail });
      Object.assign(log, { status: 'sent', messageId, sentAt: new Date(), error: null });
      return {};
    } catch (error) {
      log.error = (error as Error).message;
      if (!isPermanentSmtpFailure(error)) return { error };
      log.status = 'failed';
      return { permanent: log.error };
    } finally {
      await em.flush();
    }
  }

  return async (businessKey, kind, orgId, recipients, render, options = {}) => {
    const claim = (em: EntityManager) => em.execute(
      `insert into sent_email (id, organisation_id, kind, business_key, recipients, subject, status, created_at)
       values (gen_random_uuid(), ?, ?, ?, ?, '', 'sending', now()) on conflict (business_key) do nothing`,
      [orgId, kind, businessKey, JSON.stringify(recipients)],
    );
    let result: Attempt;
    if (options.exclusive) {
      result = await orm.em.fork().transactional(async (tx) => {
        await claim(tx);
        const log = await tx.findOneOrFail(SentEmail, { businessKey }, { lockMode: LockMode.PESSIMISTIC_WRITE });
        return attempt(tx, log, recipients, render);
      });
    } else {
      const em = orm.em.fork();
      await claim(em);
      result = await attempt(em, await em.findOneOrFail(SentEmail, { businessKey }), recipients, render);
    }
    if (result.permanent !== undefined) throw ApplicationFailure.nonRetryable(result.permanent, 'PermanentSmtpFailure');
    if (result.error !== undefined) {
      Context.current().log.warn('temporary SMTP failure, will retry', { businessKey, message: (result.error as Error).message });
      throw result.error;
    }
  };
}
