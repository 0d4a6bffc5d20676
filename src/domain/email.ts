/** The longest address SMTP carries (RFC 5321: a 256-octet path less its angle brackets). */
export const MAX_EMAIL_LENGTH = 254;

/**
 * The one check of an email address (something@somewhere.tld), for every entry point: one `@`,
 * no whitespace, a dot inside the domain. Linear in the input (no backtracking regular
 * expression: hostile input cannot stall the process), and capped at MAX_EMAIL_LENGTH.
 */
export function isEmailAddress(value: string): boolean {
  if (value.length > MAX_EMAIL_LENGTH || /\s/.test(value)) return false;
  const at = value.indexOf('@');
  if (at <= 0 || at !== value.lastIndexOf('@')) return false;
  const domain = value.slice(at + 1);
  return domain.slice(1, -1).includes('.');
}

/**
 * The one form an email address is stored and compared in: trimmed and lower-cased (customers,
 * users, /my, sign-in, webhook orders), so one person is one customer per organisation.
 */
export function normaliseEmail(value: string): string {
  return value.trim().toLowerCase();
}
