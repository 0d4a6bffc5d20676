/** The longest address SMTP carries (RFC 5321: a 256-octet path less its angle brackets). */
export const MAX_EMAIL_LENGTH = 254;

/**
 * Characters of an address outside the ASCII punctuation: letters and digits, and any non-ASCII
 * character but C1 controls and lone surrogates (RFC 6531 allows UTF-8 in both parts).
 */
const WORD = 'A-Za-z0-9\\u{A0}-\\u{D7FF}\\u{E000}-\\u{10FFFF}';
/** RFC 5322 dot-atom of the local part: no quotes, commas, angle brackets or spaces (list syntax). */
const LOCAL_PART = new RegExp(`^[${WORD}!#$%&'*+\\-/=?^_\`{|}~]+(\\.[${WORD}!#$%&'*+\\-/=?^_\`{|}~]+)*$`, 'u');
/** Host name labels (letters, digits, hyphens), at least two. */
const DOMAIN = new RegExp(`^[${WORD}-]+(\\.[${WORD}-]+)+$`, 'u');

/**
 * The one check of an email address (local@domain.tld), for every entry point: exactly one address,
 * so address-list or display-name syntax (`root,bob@x.test`, `a<b>@x.test`) that a mail library
 * would read as several recipients, or another one, is refused. Dot-separated runs of character
 * classes (each run ends at a dot, outside its class) after a length cap: linear in the input, so
 * hostile input cannot stall the process.
 */
export function isEmailAddress(value: string): boolean {
  if (value.length > MAX_EMAIL_LENGTH) return false;
  const at = value.indexOf('@');
  if (at <= 0 || at !== value.lastIndexOf('@')) return false;
  return LOCAL_PART.test(value.slice(0, at)) && DOMAIN.test(value.slice(at + 1));
}

/**
 * The one form an email address is stored and compared in: trimmed and lower-cased (customers,
 * users, /my, sign-in, webhook orders), so one person is one customer per organisation.
 */
export function normaliseEmail(value: string): string {
  return value.trim().toLowerCase();
}
