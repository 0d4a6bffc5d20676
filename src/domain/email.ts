const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** The one check of an email address (something@somewhere.tld), for every entry point. */
export function isEmailAddress(value: string): boolean {
  return EMAIL_RE.test(value);
}

/**
 * The one form an email address is stored and compared in: trimmed and lower-cased (customers,
 * users, /my, sign-in, webhook orders), so one person is one customer per organisation.
 */
export function normaliseEmail(value: string): string {
  return value.trim().toLowerCase();
}
