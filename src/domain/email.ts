const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** The one check of an email address (something@somewhere.tld), for every entry point. */
export function isEmailAddress(value: string): boolean {
  return EMAIL_RE.test(value);
}
