/** How people read sizes and times on customer pages and in emails. */

const UTC_DATE_TIME = new Intl.DateTimeFormat('en-GB', {
  timeZone: 'UTC',
  weekday: 'long',
  day: 'numeric',
  month: 'long',
  year: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  hourCycle: 'h23',
});

/** "Friday 27 November 2026, 14:05 UTC": unambiguous wherever the reader lives. */
export function formatUtc(date: Date): string {
  const parts = Object.fromEntries(UTC_DATE_TIME.formatToParts(date).map((p) => [p.type, p.value]));
  return `${parts.weekday} ${parts.day} ${parts.month} ${parts.year}, ${parts.hour}:${parts.minute} UTC`;
}

const UNITS = ['bytes', 'KB', 'MB', 'GB', 'TB'] as const;

/** Decimal units, as operating systems and phones show file sizes: "1.4 MB", "950 KB", "12 bytes". */
export function formatBytes(bytes: number): string {
  if (bytes === 1) return '1 byte';
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < UNITS.length - 1) {
    value /= 1000;
    unit += 1;
  }
  if (unit === 0) return `${bytes} bytes`;
  const rounded = value < 10 ? Math.round(value * 10) / 10 : Math.round(value);
  // 999.95 KB rounds to 1000 KB: say 1 MB instead.
  if (rounded >= 1000 && unit < UNITS.length - 1) return `1 ${UNITS[unit + 1]}`;
  return `${rounded} ${UNITS[unit]}`;
}
