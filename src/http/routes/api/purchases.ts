import type { FastifyReply } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { purchaseBatches, purchaseJson, PurchaseJsonSchema } from '../../../purchases/purchase-store';
import { saleRecorder } from '../../../purchases/record-sale';
import { PurchaseFormSchema, validateSale } from '../../../purchases/sale-form';
import { formBodyOnly } from '../../form-body';
import { jsonArrayStream } from '../../json-array-stream';
import { principalOf } from '../../plugins/principal';
import { purchaseFragment } from '../../views/purchase-fragment';
import type { AppDeps } from '../../app';
import { pageQuery } from './paging';

export function purchaseRoutes(deps: AppDeps): FastifyPluginAsyncZod {
  const sales = saleRecorder(deps.orm);
  return async (app) => {
    app.get('/api/purchases', {
      config: { access: 'member' },
      schema: {
        summary: 'Every purchase of the organisation, newest first (streamed)',
        description: 'The array is streamed in batches, so any number of purchases can be listed. '
          + 'Without `limit` every purchase is listed; with `limit` and `after`, the next page starts after the '
          + 'id of the last purchase of the previous page. An `after` that is not a purchase of the organisation is 404.',
        tags: ['purchases'],
        querystring: z.object(pageQuery('purchases', (limit) => limit.optional())),
        // Documents what the stream carries: Fastify pipes a stream without the serializer.
        response: {
          200: {
            description: 'JSON array of purchases, newest first',
            content: { 'application/json': { schema: z.array(PurchaseJsonSchema) } },
          },
        },
      },
    }, async (request, reply) => {
      const { orgId } = principalOf(request);
      const batches = await purchaseBatches(request.em, orgId, request.query);
      // The typed reply only takes the array itself; the stream is sent through the untyped one.
      return (reply as FastifyReply).type('application/json; charset=utf-8').send(jsonArrayStream(batches, purchaseJson));
    });

    app.post('/api/purchases', {
      config: { access: 'member', errorFormat: 'html-fragment' },
      preValidation: formBodyOnly,
      schema: {
        summary: 'Record a sale: creates the customer, the purchase and a download link',
        description: 'Form fields (multipart/form-data or application/x-www-form-urlencoded; JSON is refused with 415). Answers an HTML fragment.',
        tags: ['purchases'],
        consumes: ['application/x-www-form-urlencoded', 'multipart/form-data'],
        body: PurchaseFormSchema,
        response: { 201: z.string().describe('HTML fragment with data-purchase-id, data-customer-id and the link') },
      },
    }, async (request, reply) => {
      const principal = principalOf(request);
      const em = request.em;
      const { sale, customerEmail, productName } = await validateSale(em, request.body, {
        orgId: principal.orgId,
        enteredVia: principal.via === 'key' ? 'api' : 'manual',
      });
      const recorded = await sales.record(sale, deps.config.downloadLinks, deps.clock());
      deps.dispatcher.recorded(principal.orgId);
      return reply.code(201).type('text/html; charset=utf-8').send(purchaseFragment({
        purchaseId: recorded.purchaseId,
        customerId: recorded.customerId,
        customerEmail,
        productName,
        amount: sale.amount,
        currency: sale.currency,
        link: recorded.link.url,
        expiresAt: recorded.link.expiresAt,
        emailed: sale.sendReceipt,
      }));
    });
  };
}
