import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { PLATFORMS } from '../../../domain/platforms';
import { DELIVERY_SOURCES, DELIVERY_STATUSES } from '../../../domain/statuses';
import { DeliveryJsonSchema, listDeliveries, UnmatchedSkusJsonSchema, unmatchedSkus } from '../../../services/webhook-log';
import { fastJsonSerializerCompiler } from '../../json-serializer';
import { principalOf } from '../../plugins/principal';
import { pageQuery } from './paging';

/** The webhook delivery log and the unmatched-SKU counter: what the front door recorded. */
export const webhookLogRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get('/api/webhook-deliveries', {
    config: { access: 'member' },
    serializerCompiler: fastJsonSerializerCompiler,
    schema: {
      summary: 'The webhook delivery log, newest first',
      description: '100 entries per page by default (`limit` up to 1000); the next page starts `after` the id '
        + 'of the last entry of the previous one. An unknown `status`, `platform` or `source` is 400.',
      tags: ['webhooks'],
      querystring: z.object({
        status: z.enum(DELIVERY_STATUSES).optional(),
        platform: z.enum(PLATFORMS).optional(),
        source: z.enum(DELIVERY_SOURCES).optional().describe('reconciliation: only the orders reconciliation recovered'),
        ...pageQuery('deliveries', (limit) => limit.default(100)),
      }),
      response: { 200: z.array(DeliveryJsonSchema) },
    },
  }, async (request) => listDeliveries(request.em, principalOf(request).orgId, request.query));

  app.get('/api/unmatched-skus', {
    config: { access: 'member' },
    schema: {
      summary: 'SKUs of delivered orders that match no product, with how often each was seen',
      tags: ['webhooks'],
      response: { 200: UnmatchedSkusJsonSchema },
    },
  }, async (request) => unmatchedSkus(request.em, principalOf(request).orgId));
};
