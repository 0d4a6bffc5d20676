import nodemailer, { type Transporter } from 'nodemailer';
import { inSpan, SpanKind } from '../telemetry/tracing';

export interface OutgoingMail {
  to: string | string[];
  subject: string;
  text: string;
  html: string;
  /** Extra headers (List-Unsubscribe ...). */
  headers?: Record<string, string>;
  /** A Message-ID of the caller's choosing (`<…>`), so a message sent twice is recognisably one. */
  messageId?: string;
}

export interface Mailer {
  send(mail: OutgoingMail): Promise<{ messageId: string }>;
  close(): void;
}

/** One pooled transporter per process: one per message exhausts the relay's connections. */
export function createMailer(smtpUrl: string, from: string): Mailer {
  const transporter: Transporter = nodemailer.createTransport(smtpUrl, { pool: true, maxConnections: 5 } as never);
  return {
    send(mail) {
      return inSpan('smtp send', { kind: SpanKind.CLIENT }, async () => {
        const info = await transporter.sendMail({ from, ...mail });
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
export function isPermanentSmtpFailure(error: unknown): boolean {
  const code = (error as { responseCode?: unknown } | null)?.responseCode;
  return typeof code === 'number' && code >= 500 && code < 600;
}
