/**
 * Whether a text can be stored exactly as given. Pure and without dependencies: the workflows'
 * sandbox reaches it through the license keys' upload rules.
 */

/** A lone UTF-16 surrogate: with the `u` flag a well-formed pair is one code point, not in this class. */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Why a text cannot be stored exactly as given, or null when it can: PostgreSQL text cannot hold NUL
 * (the statement fails), and a lone surrogate would be stored as U+FFFD, a silently changed value.
 * Linear in the text.
 */
export function unstorableText(value: string): string | null {
  if (value.includes('\u0000')) return 'contains a NUL character';
  if (LONE_SURROGATE.test(value)) return 'contains a lone surrogate (not valid Unicode)';
  return null;
}
