/**
 * JSON parsing that keeps big integer ids digit for digit.
 *
 * `JSON.parse` turns 820982911946154508 into 820982911946154500. Node 20 has no reviver `context.source`,
 * so a pre-pass walks the text once and wraps every bare integer literal of 16 or more digits (outside
 * strings) in quotes; such values then arrive as strings holding every digit. Everything inside strings
 * (including `\"`, `\\`, `\/` and `\uXXXX` escapes) is copied untouched, and whitespace is preserved,
 * so pretty-printed bodies work. Fractions and exponents are never quoted.
 *
 * Invalid JSON stays invalid: the pre-pass only ever rewrites a number token into a string token, so
 * `JSON.parse` still throws its SyntaxError.
 */

/** Integers with at least this many digits are kept as strings (2^53 has 16 digits). */
const BIG_INTEGER_DIGITS = 16;

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

function isNumberChar(code: number): boolean {
  // 0-9 . + - e E
  return isDigit(code) || code === 46 || code === 43 || code === 45 || code === 101 || code === 69;
}

/** The text with big integer literals quoted; identical when there are none. */
export function quoteBigIntegers(text: string): string {
  const parts: string[] = [];
  let copiedUpTo = 0;
  let i = 0;
  const length = text.length;
  while (i < length) {
    const code = text.charCodeAt(i);
    if (code === 34) {
      // A string: skip to its closing quote, stepping over every escaped character.
      i += 1;
      while (i < length) {
        const c = text.charCodeAt(i);
        if (c === 92) i += 2;
        else if (c === 34) break;
        else i += 1;
      }
      i += 1;
    } else if (code === 45 || isDigit(code)) {
      const start = i;
      while (i < length && isNumberChar(text.charCodeAt(i))) i += 1;
      const token = text.slice(start, i);
      const digits = token.charCodeAt(0) === 45 ? token.slice(1) : token;
      if (digits.length >= BIG_INTEGER_DIGITS && /^[1-9]\d*$/.test(digits)) {
        parts.push(text.slice(copiedUpTo, start), '"', token, '"');
        copiedUpTo = i;
      }
    } else {
      i += 1;
    }
  }
  if (copiedUpTo === 0) return text;
  parts.push(text.slice(copiedUpTo));
  return parts.join('');
}

/** `JSON.parse` with big integers kept as digit strings. Throws SyntaxError on invalid JSON. */
export function parseJson(text: string): unknown {
  return JSON.parse(quoteBigIntegers(text));
}
