import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { boundedText, FIELD_LIMITS } from '../../../domain/field-limits';
import {
  assertSkuSeen, DeliveredSchema, deliverHeldSales, heldSales, HeldSalesSchema, mapUnmatchedSku,
} from '../../../services/unmatched-replay';
import { principalOf } from '../../plugins/principal';
import type { AppDeps } from '../../app';

const Params = z.object({
  sku: boundedText(FIELD_LIMITS.sku).describe('the SKU as sent, URL-encoded (matched case-insensitively after trimming)'),
});

/** Map-and-replay (decisions §12): the sales an unknown SKU held back, mapping it, delivering them. */
export function unmatchedSkuRoutes(deps: AppDeps): FastifyPluginAsyncZod {
  return async (app) => {
    app.get('/api/unmatched-skus/:sku/sales', {
      config: { access: 'member' },
      schema: {
        summary: 'The sales an unknown SKU held back (its unmatched lines), oldest first',
        tags: ['webhooks'],
        params: Params,
        response: { 200: HeldSalesSchema },
      },
    }, async (request) => {
      const { orgId } = principalOf(request);
      await assertSkuSeen(request.em, orgId, request.params.sku);
      return heldSales(request.em, orgId, request.params.sku);
    });

    app.post('/api/unmatched-skus/:sku/map', {
      config: { access: 'admin' },
      schema: {
        summary: 'Map an unknown SKU to a product (one of its extra SKUs) and list the sales it held back',
        description: 'Body `{productId}`. An SKU that already maps to another product is 409. Nothing is delivered yet: '
          + 'see `POST /api/unmatched-skus/{sku}/deliver`.',
        tags: ['webhooks'],
        params: Params,
        body: z.object({ productId: boundedText(FIELD_LIMITS.id).describe('the product id (UUID)') }),
        response: { 200: HeldSalesSchema },
      },
    }, async (request) => {
      const principal = principalOf(request);
      await assertSkuSeen(request.em, principal.orgId, request.params.sku);
      return mapUnmatchedSku(request.em, deps.storage, principal, request.params.sku, request.body.productId);
    });

    app.post('/api/unmatched-skus/:sku/deliver', {
      config: { access: 'admin' },
      schema: {
        summary: 'Deliver the sales a now-mapped SKU held back, as the webhook would have',
        description: 'Each held line starts (or joins) its fulfilment run with the same workflow id and de-duplication keys '
          + 'as a delivery of its order: receipts go out once, whatever is clicked twice or redelivered meanwhile. '
          + 'The items move from `unmatched` to `fulfilled`, `duplicate` or `error`; their entries are Pending until then. '
          + 'The SKU must map to a live product (409 otherwise).',
        tags: ['webhooks'],
        params: Params,
        response: { 200: DeliveredSchema },
      },
    }, async (request) => {
      const { orgId } = principalOf(request);
      await assertSkuSeen(request.em, orgId, request.params.sku);
      const delivered = await deliverHeldSales(request.em, orgId, request.params.sku);
      if (delivered.delivering > 0) deps.dispatcher.recorded(orgId);
      return delivered;
    });
  };
}
