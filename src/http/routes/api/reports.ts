import { Readable, pipeline } from 'node:stream';
import type { FastifyReply } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { stringify } from 'csv-stringify';
import { z } from 'zod';
import { downloadReportBatches } from '../../../services/download-report';
import { DOWNLOAD_REPORT_COLUMNS, type DownloadReportRow } from '../../../purchases/link-store';
import { principalOf } from '../../plugins/principal';

const day = (name: string) => z
  .string({ error: `${name} is required, a UTC day written YYYY-MM-DD` })
  .max(10, `${name} must be a UTC day written YYYY-MM-DD`)
  .regex(/^\d{4}-\d{2}-\d{2}$/, `${name} must be a UTC day written YYYY-MM-DD`)
  .describe('UTC day, inclusive');

async function* rowsOf(batches: AsyncIterable<DownloadReportRow[]>): AsyncGenerator<DownloadReportRow> {
  for await (const batch of batches) yield* batch;
}

export const reportRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get('/api/reports/downloads', {
    // Reports answer every error in plain text (spec, Errors), 401 and 403 included.
    config: { access: 'admin', errorFormat: 'text' },
    schema: {
      summary: 'Completed file downloads between two UTC days, inclusive, as CSV (owner/admin)',
      description: `Columns: ${DOWNLOAD_REPORT_COLUMNS.join(', ')}. One row per completed file transfer, oldest first. `
        + 'Streamed. Errors are plain text.',
      tags: ['reports'],
      querystring: z.object({ from: day('from'), to: day('to') }),
      response: {
        200: { description: 'CSV with a header row', content: { 'text/csv': { schema: z.string() } } },
      },
    },
  }, async (request, reply) => {
    const { from, to } = request.query;
    const batches = await downloadReportBatches(request.em, principalOf(request).orgId, { from, to });
    // escape_formulas: a customer name such as "=HYPERLINK(...)" must not become a formula in a spreadsheet.
    const csv = stringify({ header: true, columns: [...DOWNLOAD_REPORT_COLUMNS], escape_formulas: true });
    // pipeline destroys both ends on failure, and Fastify destroys the CSV stream when the client goes.
    pipeline(Readable.from(rowsOf(batches)), csv, (error) => {
      if (error) request.log.error({ err: error }, 'download report stream failed');
    });
    // The typed reply only takes the schema's string; the stream is sent through the untyped one.
    return (reply as FastifyReply)
      .type('text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="downloads-${from}-${to}.csv"`)
      .send(csv);
  });
};
