import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { findDownloadLink, findLinkFile, recordBytesServed, reserveBytes } from '../../../services/downloads';
import { decideRange, ifRangeHolds, noneMatchHits, notModifiedSince, type RangeDecision } from '../../byte-range';
import { attachmentDisposition } from '../../content-disposition';
import { customerErrorPage, unknownLinkPage } from '../../views/customer-pages';
import type { AppDeps } from '../../app';
import { limitPage, refusalPage } from './download-page';
import { requesterOf } from '../../requester';
import { servedFile } from '../../../services/stamped-copies';
import { sendPage } from './page-reply';
import { boundedText, FIELD_LIMITS } from '../../../domain/field-limits';

/**
 * `/d/{token}/files/{fileId}`: one file of the link's purchased version, streamed from storage with
 * single-range support. The file is found by id within that version only; its storage key comes
 * from the database, so nothing in the URL ever becomes a path.
 */
export function downloadFileRoutes(deps: AppDeps): FastifyPluginAsyncZod {
  return async (app) => {
    app.route({
      method: ['GET', 'HEAD'],
      url: '/d/:token/files/:fileId',
      config: { errorFormat: 'page' },
      schema: {
        summary: 'Download one file of a link (HTTP Range supported)',
        description: 'Single ranges (`bytes=a-b`, `a-`, `-n`) answer 206 with Content-Range; an unsatisfiable range 416; '
          + 'several ranges or a malformed header are ignored (200, whole file). ETag (the SHA-256) and Last-Modified, '
          + 'with If-None-Match, If-Modified-Since and If-Range. Unknown link or file: 404; used or expired link, revoked purchase, '
          + 'or download limit reached (completed transfers of the purchase across all its links, decisions §10, or the bytes '
          + 'of the file sent to the purchase, whole or not, would pass limit × size): 410. '
          + 'A response whose bytes, with those sent to the purchase before, cover the whole file is recorded as a completed transfer. '
          + 'A PDF of a product with `stampPdfs` is the purchase\'s stamped copy (decisions §16), made on its first request: its size, '
          + 'ETag and Last-Modified are the copy\'s.',
        tags: ['customer pages'],
        params: z.object({ token: boundedText(FIELD_LIMITS.token), fileId: boundedText(FIELD_LIMITS.id) }),
      },
      handler: async (request, reply) => {
        const em = request.em;
        const { token, fileId } = request.params;
        const link = await findDownloadLink(em, token, deps.clock());
        if (!link) return sendPage(reply, 404, unknownLinkPage());
        const refusal = refusalPage(token, link, deps.config.downloadLinks, true);
        if (refusal !== null) return sendPage(reply, 410, refusal);
        const listed = await findLinkFile(em, link, fileId);
        if (!listed) return sendPage(reply, 404, customerErrorPage(404, 'This file is not part of this download link.'));
        // A PDF of a product that stamps is the purchase's own copy, with its own size and ETag.
        const { file, madeCopy } = await servedFile(em, deps.storage, link, listed, deps.clock());
        if (madeCopy) deps.metrics.pdfCopiesStamped.inc();

        const etag = `"${file.sha256}"`;
        const lastModified = file.createdAt;
        const fileHeaders = {
          'accept-ranges': 'bytes',
          etag,
          'last-modified': lastModified.toUTCString(),
          'cache-control': 'private, no-cache',
          'x-content-type-options': 'nosniff',
          'referrer-policy': 'no-referrer',
          // An uploaded file is never a page of this origin, whatever its type says.
          'content-security-policy': "default-src 'none'; sandbox",
        };
        const headers = request.headers;
        const notModified = headers['if-none-match'] !== undefined
          ? noneMatchHits(headers['if-none-match'], etag)
          : notModifiedSince(headers['if-modified-since'], lastModified);
        if (notModified) return reply.headers(fileHeaders).code(304).send();

        const ifRange = headers['if-range'];
        const range: RangeDecision = ifRangeHolds(Array.isArray(ifRange) ? ifRange[0] : ifRange, etag, lastModified)
          ? decideRange(headers.range, file.size)
          : { kind: 'full' };
        if (range.kind === 'unsatisfiable') {
          return reply.headers(fileHeaders).code(416).header('content-range', `bytes */${file.size}`).send();
        }
        const start = range.kind === 'partial' ? range.start : 0;
        const end = range.kind === 'partial' ? range.end : file.size - 1;
        // The bytes are counted before they go out: a response cut short costs them all the same.
        if (request.method === 'GET' && !await reserveBytes(em, link, file, { start, end }, deps.clock())) {
          return sendPage(reply, 410, limitPage(link));
        }
        reply.headers(fileHeaders);
        if (range.kind === 'partial') reply.code(206).header('content-range', `bytes ${start}-${end}/${file.size}`);
        reply
          .type(file.contentType)
          .header('content-disposition', attachmentDisposition(file.name))
          .header('content-length', String(end - start + 1));
        if (request.method === 'HEAD') return reply.send();

        // Every response that went out whole adds its bytes to the purchase's coverage of the file;
        // the transfer counts once they cover the file ('finish' comes only when every byte went
        // out: an aborted response just closes and adds nothing).
        const requester = requesterOf(request);
        deps.metrics.downloadsStarted.inc();
        reply.raw.once('finish', () => {
          deps.metrics.downloadBytes.inc(end - start + 1);
          recordBytesServed(request.em, link, file, { start, end }, requester, deps.clock())
            .then((completed) => completed && deps.metrics.downloadsCompleted.inc())
            .catch((error: unknown) => request.log.error({ err: error }, 'could not record the bytes served'));
        });
        return reply.send(file.size === 0 ? Buffer.alloc(0) : await deps.storage.read(file.storageKey, { start, end }));
      },
    });
  };
}
