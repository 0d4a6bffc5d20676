const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids from outside are checked before they reach a uuid column: a malformed one is "not found". */
export function isUuid(value: string): boolean {
  return UUID_RE.test(value);
}
