import type { EntityManager } from '@mikro-orm/postgresql';
import { isoUtc } from '../db/legacy-sql';
import { ValidationError } from '../domain/errors';
import { readInBatches } from './keyset-batches';
import { parseDay } from './organisations';

/** The report's columns, in order (decisions §3, issue 3). */
export const DOWNLOAD_REPORT_COLUMNS = [
  'downloaded_at', 'customer_email', 'customer_name', 'product_id', 'product_name', 'version',
  'purchase_id', 'file_name', 'bytes', 'ip',
] as const;

export type DownloadReportRow = Record<(typeof DOWNLOAD_REPORT_COLUMNS)[number], string | null> & { id: string };

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

// One row per completed file transfer, oldest first; (created_at, id) is the keyset. The version
// is the downloaded file's, else (file since deleted) the purchased one's.
const SELECT = `select a.id, ${isoUtc('a.created_at')} as downloaded_at, c.email as customer_email,
    c.name as customer_name, p.product_id, pr.name as product_name, coalesce(fv.version, pv.version) as version,
    a.purchase_id, f.name as file_name, a.bytes::text as bytes, a.ip
  from activity_log_entry a
  join purchase p on p.id = a.purchase_id
  join customer c on c.id = p.customer_id
  join product pr on pr.id = p.product_id
  left join version_file f on f.id = a.file_id
  left join product_version fv on fv.id = f.version_id
  left join product_version pv on pv.id = p.version_id
  where a.organisation_id = ? and a.kind = 'file_download'
    and a.created_at >= ?::timestamptz and a.created_at < ?::timestamptz`;
const AFTER = ` and (a.created_at, a.id) > (select b.created_at, b.id from activity_log_entry b where b.id = ?)`;
const ORDER = ` order by a.created_at, a.id limit ?`;

/** The report's rows for the organisation and range, read in batches (first batch read already). */
export async function downloadReportBatches(
  em: EntityManager,
  orgId: string,
  range: ReportRange,
): Promise<AsyncIterable<DownloadReportRow[]>> {
  const { start, end } = reportRange(range.from, range.to);
  return readInBatches<DownloadReportRow>((after, size) => em.execute<DownloadReportRow[]>(
    SELECT + (after === null ? '' : AFTER) + ORDER,
    after === null ? [orgId, start, end, size] : [orgId, start, end, after, size],
  ));
}
