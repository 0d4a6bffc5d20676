import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { simpleParser, type AddressObject, type HeaderLines } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import type { Logger } from './logger';

/** A message the dev mailbox received. `to` is the SMTP envelope: every accepted recipient, Bcc too. */
export interface DevMail {
  id: string;
  /** The Message-ID header as sent (`<…>`), or null: the service's sent-email log records it per organisation. */
  messageId: string | null;
  from: string;
  to: string[];
  subject: string;
  text: string;
  html: string;
  /**
   * The raw header fields by lower-case name, unfolded (a name sent more than once keeps the
   * first): what a mail client sees, e.g. `list-unsubscribe`, before any parsing.
   */
  headers: Record<string, string>;
  receivedAt: Date;
}

/** Refuse matching recipients at RCPT TO, as a real relay would, to test delivery failures. */
export interface RecipientRejection {
  match: (address: string) => boolean;
  /** SMTP reply code: 5xx is permanent (e.g. 550 no such user), 4xx temporary (e.g. 451 try later). */
  code: number;
  message?: string;
}

export interface DevMailboxOptions {
  /** Default 2525, or any free port when 2525 is taken; 0 asks for any free port. */
  port?: number;
  /** How many messages to keep, newest first; the oldest are dropped. Default 500. */
  maxMessages?: number;
  reject?: RecipientRejection | RecipientRejection[];
  /**
   * Runs once a message is received, before the 250 that accepts it: lets a test act between the
   * relay's acceptance and the sender's record of it (e.g. stop the sender's database).
   */
  beforeAccept?: (mail: DevMail) => Promise<void>;
}

export interface DevMailbox {
  /** `smtp://127.0.0.1:<port>`, usable as SMTP_URL */
  url: string;
  port: number;
  /** Newest first. */
  messages(): DevMail[];
  /** Resolves with the newest message (already received or arriving later) that matches. */
  waitFor(predicate: (mail: DevMail) => boolean, timeoutMs?: number): Promise<DevMail>;
  /** Replace the rejection rules, e.g. end a run of 451s to let a retry through. */
  setReject(reject: RecipientRejection | RecipientRejection[] | undefined): void;
  /** Every refused RCPT TO so far, oldest first: lets a test count delivery attempts. */
  rejections(): Array<{ address: string; code: number; at: Date }>;
  clear(): void;
  stop(): Promise<void>;
}

export const DEFAULT_DEV_MAILBOX_PORT = 2525;

/** `Name: value` lines (possibly folded) → lower-case name → unfolded value. */
function rawHeaders(lines: HeaderLines): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const { key, line } of lines) {
    const name = key.toLowerCase();
    if (name in headers) continue;
    const colon = line.indexOf(':');
    headers[name] = line.slice(colon + 1).replace(/\r?\n[ \t]+/g, ' ').trim();
  }
  return headers;
}

function addressText(field: AddressObject | AddressObject[] | undefined): string {
  if (!field) return '';
  return (Array.isArray(field) ? field : [field]).map((a) => a.text).join(', ');
}

/**
 * The embedded dev mailbox: an in-process SMTP server on 127.0.0.1 (no TLS, any or no AUTH) that
 * keeps what it receives in memory for the dashboard; also the tests' SMTP sink.
 */
export async function startDevMailbox(log: Logger, options: DevMailboxOptions = {}): Promise<DevMailbox> {
  const maxMessages = options.maxMessages ?? 500;
  const store: DevMail[] = [];
  const refused: Array<{ address: string; code: number; at: Date }> = [];
  const listeners = new Set<(mail: DevMail) => void>();
  let rules: RecipientRejection[] = [];
  const setReject = (reject: DevMailboxOptions['reject']) => {
    rules = reject === undefined ? [] : Array.isArray(reject) ? [...reject] : [reject];
  };
  setReject(options.reject);

  const server = new SMTPServer({
    banner: 'delivery-service dev mailbox',
    logger: false,
    // Plain SMTP on loopback: advertising STARTTLS would make clients try it with a self-signed cert.
    disabledCommands: ['STARTTLS'],
    authOptional: true,
    allowInsecureAuth: true, // SMTP_URL may carry user:pass; accept any
    onAuth: (auth, _session, callback) => callback(null, { user: auth.username ?? 'dev' }),
    size: 50 * 1024 * 1024,
    // Pooled clients keep connections open; don't let stop() wait 30 s for them.
    closeTimeout: 500,
    onRcptTo: (address, _session, callback) => {
      const rule = rules.find((r) => r.match(address.address));
      if (!rule) return callback();
      refused.push({ address: address.address, code: rule.code, at: new Date() });
      const err = new Error(rule.message ?? (rule.code >= 500 ? 'Mailbox unavailable' : 'Try again later')) as Error & {
        responseCode: number;
      };
      err.responseCode = rule.code;
      callback(err);
    },
    onData: (stream, session, callback) => {
      simpleParser(stream)
        .then(async (parsed) => {
          const mail: DevMail = {
            id: randomUUID(),
            messageId: parsed.messageId ?? null,
            from: addressText(parsed.from) || (session.envelope.mailFrom ? session.envelope.mailFrom.address : ''),
            to: session.envelope.rcptTo.map((r) => r.address),
            subject: parsed.subject ?? '',
            text: parsed.text ?? '',
            html: typeof parsed.html === 'string' ? parsed.html : '',
            headers: rawHeaders(parsed.headerLines),
            receivedAt: new Date(),
          };
          await options.beforeAccept?.(mail);
          store.unshift(mail);
          if (store.length > maxMessages) store.length = maxMessages;
          for (const listener of listeners) listener(mail);
          callback();
        })
        .catch((err: Error) => {
          log.warn(`dev mailbox: could not take a message: ${err.message}`);
          callback(err);
        });
    },
  });
  server.on('error', (err) => log.warn(`dev mailbox: ${err.message}`));

  const port = await listen(server, options.port ?? DEFAULT_DEV_MAILBOX_PORT, options.port === undefined);
  const url = `smtp://127.0.0.1:${port}`;
  log.info(`dev mailbox: SMTP on ${url}`);

  return {
    url,
    port,
    messages: () => [...store],
    waitFor(predicate, timeoutMs = 10_000) {
      const found = store.find(predicate);
      if (found) return Promise.resolve(found);
      return new Promise<DevMail>((resolve, reject) => {
        const listener = (mail: DevMail) => {
          if (!predicate(mail)) return;
          clearTimeout(timer);
          listeners.delete(listener);
          resolve(mail);
        };
        const timer = setTimeout(() => {
          listeners.delete(listener);
          const seen = store.map((m) => `"${m.subject}" to ${m.to.join(',')}`).slice(0, 10).join('; ') || 'none';
          reject(new Error(`dev mailbox: no matching mail within ${timeoutMs} ms (received: ${seen})`));
        }, timeoutMs);
        listeners.add(listener);
      });
    },
    setReject,
    rejections: () => [...refused],
    clear() {
      store.length = 0;
      refused.length = 0;
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Listens on 127.0.0.1. With a default port, "taken" (by another process, or another test file's
 * mailbox a moment earlier) falls back to any free port instead of failing.
 */
function listen(server: SMTPServer, port: number, fallbackToAny: boolean): Promise<number> {
  const attempt = (p: number) =>
    new Promise<number>((resolve, reject) => {
      const onError = (err: Error) => reject(err);
      server.server.once('error', onError);
      server.listen(p, '127.0.0.1', () => {
        server.server.removeListener('error', onError);
        resolve((server.server.address() as AddressInfo).port);
      });
    });
  return attempt(port).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'EADDRINUSE' && fallbackToAny && port !== 0) return attempt(0);
    throw err;
  });
}
