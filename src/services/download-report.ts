import type { EntityManager } from '@mikro-orm/postgresql';
import { ValidationError } from '../domain/errors';
import { readInBatches } from './keyset-batches';
import { parseDay } from './organisations';
import { downloadReportBatch, type DownloadReportRow } from '../purchases/link-store';

export interface ReportRange {
  from: string;
  to: string;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** `from` and `to` are UTC days, both inclusive: [from 00:00Z, to + 1 day 00:00Z). */
export function reportRange(from: string, to: string): { start: string; end: string } {
  parseDay(from, 'from');
  parseDay(to, 'to');
  if (from > to) throw new ValidationError('from must not be after to');
  const start = new Date(`${from}T00:00:00Z`);
  const end = new Date(Date.parse(`${to}T00:00:00Z`) + DAY_MS);
  return { start: start.toISOString(), end: end.toISOString() };
}

/** The report's rows for the organisation and range, read in batches (first batch read already). */
export async function downloadReportBatches(
  em: EntityManager,
  orgId: string,
  range: ReportRange,
): Promise<AsyncIterable<DownloadReportRow[]>> {
  const { start, end } = reportRange(range.from, range.to);
  return readInBatches<DownloadReportRow>((after, size) => downloadReportBatch(em, orgId, { start, end }, after, size));
}
