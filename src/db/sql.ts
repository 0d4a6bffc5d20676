/**
 * SQL fragments shared by the read queries written in raw SQL. The ORM's connection hands
 * timestamps over as PostgreSQL text in the session's time zone, so read models format them in SQL.
 */

/** A timestamptz column as ISO 8601 in UTC with milliseconds ("2026-11-25T22:09:51.123Z"); null stays null. */
export function isoUtc(column: string): string {
  return `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}
