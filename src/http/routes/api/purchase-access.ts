import type { FastifyReply } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { boundedText, FIELD_LIMITS } from '../../../domain/field-limits';
import { REVOKE_REASONS } from '../../../domain/statuses';
import { renderEvidencePdf } from '../../../evidence/evidence-pdf';
import { setPurchaseDownloadLimit } from '../../../purchases/purchase-store';
import { rearmPurchase } from '../../../services/download-rearm';
import { STAFF_MAIL_LIMIT } from '../../../services/staff-mail-limit';
import { purchaseEvidence } from '../../../services/evidence';
import { restoreByHand, revokeByHand } from '../../../services/revocations';
import { DownloadLimitInput } from '../../../services/products';
import { principalOf, type Principal } from '../../plugins/principal';
import type { AppDeps } from '../../app';

const Params = z.object({ purchaseId: boundedText(FIELD_LIMITS.id).describe('the purchase id (UUID)') });

const RevocationSchema = z.object({
  purchaseId: z.uuid(),
  revokedAt: z.string().nullable().describe('ISO 8601; null when access is not withdrawn'),
  revokeReason: z.enum(REVOKE_REASONS).nullable(),
});

const actorOf = (principal: Principal) => ({ userId: principal.userId, via: principal.via });

/**
 * What owners and admins do to one purchase's access (decisions §9–§11): revoke and restore by
 * hand, the download limit override, re-arm, and the dispute evidence record.
 */
export function purchaseAccessRoutes(deps: AppDeps): FastifyPluginAsyncZod {
  return async (app) => {
    app.post('/api/purchases/:purchaseId/revoke', {
      config: { access: 'admin' },
      schema: {
        summary: 'Withdraw access to a purchase by hand (owner/admin)',
        description: 'Its links and file URLs answer 410 "access withdrawn"; /my skips it; reports keep it. Reason `manual`. '
          + 'Idempotent: an already revoked purchase keeps its reason and time. Logged in the purchase\'s activity.',
        tags: ['purchases'],
        params: Params,
        response: { 200: RevocationSchema },
      },
    }, async (request) => {
      const principal = principalOf(request);
      const state = await revokeByHand(request.em, principal.orgId, request.params.purchaseId, actorOf(principal), deps.clock());
      return { ...state, revokedAt: state.revokedAt?.toISOString() ?? null };
    });

    app.post('/api/purchases/:purchaseId/restore', {
      config: { access: 'admin' },
      schema: {
        summary: 'Give access back to a revoked purchase (owner/admin)',
        description: 'Its links that are neither expired nor used work again. Idempotent. Logged in the purchase\'s activity.',
        tags: ['purchases'],
        params: Params,
        response: { 200: RevocationSchema },
      },
    }, async (request) => {
      const principal = principalOf(request);
      const state = await restoreByHand(request.em, principal.orgId, request.params.purchaseId, actorOf(principal), deps.clock());
      return { ...state, revokedAt: null };
    });

    app.put('/api/purchases/:purchaseId/download-limit', {
      config: { access: 'admin' },
      schema: {
        summary: 'Override the product\'s download limit for one purchase (owner/admin)',
        description: 'Body `{downloadLimit}`: completed file transfers allowed; null or absent = the product\'s limit. '
          + 'Logged in the purchase\'s activity.',
        tags: ['purchases'],
        params: Params,
        body: z.object({ downloadLimit: DownloadLimitInput.optional() }),
        response: { 200: z.object({ purchaseId: z.uuid(), downloadLimit: z.number().int().nullable() }) },
      },
    }, async (request) => {
      const principal = principalOf(request);
      const downloadLimit = request.body.downloadLimit ?? null;
      await setPurchaseDownloadLimit(request.em, principal.orgId, request.params.purchaseId, downloadLimit, actorOf(principal), deps.clock());
      return { purchaseId: request.params.purchaseId, downloadLimit };
    });

    app.post('/api/purchases/:purchaseId/rearm', {
      config: { access: 'admin' },
      schema: {
        summary: 'Re-arm a purchase: reset its download count and email a fresh link (owner/admin)',
        description: 'Restarts the count of completed transfers, makes every open link of the purchase stop working, and '
          + 'emails a fresh link to the purchase\'s email (through the outbox: sent even if the workflow engine is away now). '
          + `A revoked purchase is 409: restore it first. At most ${STAFF_MAIL_LIMIT.perPurchase} emails by hand per purchase and hour (429 with Retry-After).`,
        tags: ['purchases'],
        params: Params,
        response: { 200: z.object({ purchaseId: z.uuid(), linkSentTo: z.string() }) },
      },
    }, async (request) => {
      const principal = principalOf(request);
      const rearmed = await rearmPurchase(request.em, principal.orgId, request.params.purchaseId, actorOf(principal), deps.clock());
      deps.dispatcher.recorded(principal.orgId);
      return rearmed;
    });

    app.get('/api/purchases/:purchaseId/evidence', {
      config: { access: 'admin' },
      schema: {
        summary: 'The dispute evidence record of a purchase, as JSON or PDF (owner/admin)',
        description: 'The order as received (with its delivery log entries), the receipt (time accepted by SMTP, message id, '
          + 'recipient), the newest 200 links issued (time, how) with the count of older ones (`linksNotListed`), the newest 200 page '
          + 'opens and completed file transfers (time, IP, user agent, file, bytes, count: a link\'s opens within a minute are one entry) '
          + 'with the count of older ones (`accessesNotListed`), staff actions, and the license key with its newest 200 installations '
          + '(`license.activationsNotListed`). `format=pdf` answers a PDF to attach to a chargeback reply, drawn in a worker thread: '
          + '503 when that takes too long, or when as many PDFs as the process has cores already wait.',
        tags: ['purchases'],
        params: Params,
        querystring: z.object({ format: z.enum(['json', 'pdf']).default('json') }),
        response: {
          200: {
            description: 'The record',
            content: {
              'application/json': { schema: z.object({}).passthrough().describe('EvidenceRecord: see src/domain/evidence.ts') },
              'application/pdf': { schema: z.string().describe('PDF') },
            },
          },
        },
      },
    }, async (request, reply) => {
      const record = await purchaseEvidence(request.em, principalOf(request).orgId, request.params.purchaseId, deps.clock());
      // The typed reply only takes the schema's shapes; the record and the PDF go through the untyped one.
      const untyped = reply as FastifyReply;
      if (request.query.format === 'json') return untyped.send(record);
      const pdf = await renderEvidencePdf(record);
      return untyped
        .type('application/pdf')
        .header('content-disposition', `attachment; filename="evidence-${record.purchase.id}.pdf"`)
        .send(pdf);
    });
  };
}
