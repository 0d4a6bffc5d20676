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
) => Promise<void>;

/**
 * Sends one email at most once per business key. The key's sent-email row is locked while the
 * message goes out, so two activities with the same key (two runs alerting about one order)
 * send it once, and a retry after a success sends nothing. A 5xx rejection is permanent
 * (non-retryable, also for any later attempt with that key); anything else is thrown as is,
 * so Temporal retries it within the caller's window.
 */
export function createSendOnce({ orm, mailer }: Pick<ActivityDeps, 'orm' | 'mailer'>): SendOnce {
  return async (businessKey, kind, orgId, recipients, render) => {
    const attempt = await orm.em.fork().transactional(async (tx): Promise<{ error?: unknown; permanent?: string }> => {
      await tx.execute(
        `insert into sent_email (id, organisation_id, kind, business_key, recipients, subject, status, created_at)
         values (gen_random_uuid(), ?, ?, ?, ?, '', 'sending', now()) on conflict (business_key) do nothing`,
        [orgId, kind, businessKey, JSON.stringify(recipients)],
      );
      const log = await tx.findOneOrFail(SentEmail, { businessKey }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (log.status === 'sent') return {};
      if (log.status === 'failed') return { permanent: log.error ?? 'refused by the mail server' };
      const mail = await render(tx);
      log.subject = mail.subject;
      try {
        const { messageId } = await mailer.send({ to: recipients, ...mail });
        Object.assign(log, { status: 'sent', messageId, sentAt: new Date(), error: null });
        return {};
      } catch (error) {
        log.error = (error as Error).message;
        if (isPermanentSmtpFailure(error)) {
          log.status = 'failed';
          return { permanent: log.error };
        }
        return { error };
      }
    });
    if (attempt.permanent !== undefined) throw ApplicationFailure.nonRetryable(attempt.permanent, 'PermanentSmtpFailure');
    if (attempt.error !== undefined) {
      Context.current().log.warn('temporary SMTP failure, will retry', { businessKey, message: (attempt.error as Error).message });
      throw attempt.error;
    }
  };
}
