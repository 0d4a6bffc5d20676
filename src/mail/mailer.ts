import { createHash } from 'node:crypto';
import nodemailer, { type Transporter } from 'nodemailer';
import { inSpan, SpanKind } from '../telemetry/tracing';

export interface OutgoingMail {
  to: string | string[];
  subject: string;
  text: string;
  html: string;
  /** Extra headers (List-Unsubscribe ...). */
  headers?: Record<string, string>;
  /** A Message-ID of the caller's choosing (`<…>`, see `messageIdFor`), so a message sent twice is recognisably one. */
  messageId?: string;
}

export interface Mailer {
  /** Rejects with an `SmtpFailure`. */
  send(mail: OutgoingMail): Promise<{ messageId: string }>;
  close(): void;
}

/**
 * A failed send as it may travel (the activity's failure in Temporal's history, spans, logs): the
 * transport's code and the relay's reply status, never the reply's text, which names recipients.
 */
export class SmtpFailure extends Error {
  override readonly name = 'SmtpFailure';

  constructor(readonly code: string, readonly responseCode: number | undefined) {
    super(`SMTP ${code}${responseCode === undefined ? '' : ` ${responseCode}`}`);
  }
}

function smtpFailureOf(error: unknown): SmtpFailure {
  const { code, responseCode } = (error ?? {}) as { code?: unknown; responseCode?: unknown };
  return new SmtpFailure(typeof code === 'string' ? code : 'EUNKNOWN', typeof responseCode === 'number' ? responseCode : undefined);
}

/** SMTP connections each process keeps open to the relay at most: its sends in flight at most. */
export const MAIL_CONNECTIONS = 5;

/**
 * One pooled transporter per process: its connections stay open between messages (a connection per
 * message exhausts the relay's connections and pays its greeting each time). The URL goes inside the
 * options: given as a string, nodemailer takes the second argument for message defaults, not options.
 */
export function createMailer(smtpUrl: string, from: string): Mailer {
  const transporter: Transporter = nodemailer.createTransport({ url: smtpUrl, pool: true, maxConnections: MAIL_CONNECTIONS });
  return {
    send(mail) {
      return inSpan('smtp send', { kind: SpanKind.CLIENT }, async () => {
        const info = await transporter.sendMail({ from, ...mail }).catch((error: unknown) => {
          throw smtpFailureOf(error);
        });
        return { messageId: String(info.messageId) };
      });
    },
    close() {
      transporter.close();
    },
  };
}

/**
 * A 5xx SMTP reply is permanent: retrying cannot help. Everything else (4xx, refused connection,
 * timeout) is temporary (decisions §5).
 */
export function isPermanentSmtpFailure(error: SmtpFailure): boolean {
  const code = error.responseCode;
  return code !== undefined && code >= 500 && code < 600;
}

/** A business key of ids and words only (`update:{version}:{purchase}`): readable as a Message-ID. */
const PLAIN_KEY = /^[A-Za-z0-9-]+(?::[A-Za-z0-9-]+)*$/;

/**
 * The Message-ID of the email of `businessKey` (the sent-email log's unique key): the same on every
 * attempt, so a message sent again (the relay accepted it, and the log's "sent" was lost) is the
 * same message to mail systems, which collapse it. A plain key reads as itself, `:` as `.`
 * (`<update.{version}.{purchase}@host>`); any other (an alert's key holds the platform's order id,
 * any text) is its kind and SHA-256, which no plain key of ours spells.
 */
export function messageIdFor(kind: string, businessKey: string, host: string): string {
  const local = PLAIN_KEY.test(businessKey)
    ? businessKey.replaceAll(':', '.')
    : `${kind}.sha256.${createHash('sha256').update(businessKey).digest('hex')}`;
  return `<${local}@${host}>`;
}
