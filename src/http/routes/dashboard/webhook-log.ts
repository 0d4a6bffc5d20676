import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { boundedText, FIELD_LIMITS } from '../../../domain/field-limits';
import { PLATFORMS } from '../../../domain/platforms';
import { DELIVERY_SOURCES, DELIVERY_STATUSES } from '../../../domain/statuses';
import { findCustomers } from '../../../purchases/customer-store';
import { recordedOrderLines, type OrderLineKey } from '../../../purchases/purchase-store';
import { listProducts } from '../../../services/products';
import { listDeliveries } from '../../../services/webhook-log';
import { principalOf } from '../../plugins/principal';
import { webhookLogPage } from '../../views/webhook-log';
import { outboxBacklog } from '../../../services/workflow-outbox';
import type { AppDeps } from '../../app';
import { pageContextOf } from './guard';
import { sendPage } from './replies';

const PAGE_SIZE = 50;
const CUSTOMER_CHOICES = 500;

/** An empty select value means "any". */
const optionalEnum = <T extends readonly [string, ...string[]]>(values: T) =>
  z.union([z.enum(values), z.literal('')]).optional().transform((v) => (v ? v : undefined));

/** The webhook delivery log: filters, items with their reasons, links to Temporal, held sales recorded by hand. */
export function webhookLogRoutes(deps: AppDeps): FastifyPluginAsyncZod {
  const uiUrl = deps.temporalUiUrl;
  const workflowUrl = (workflowId: string): string | null => uiUrl
    ? `${uiUrl.replace(/\/+$/, '')}/namespaces/${encodeURIComponent(deps.config.temporal.namespace)}/workflows/${encodeURIComponent(workflowId)}`
    : null;

  return async (app) => {
    app.get('/webhooks-log', {
      config: { dashboard: 'member', errorFormat: 'page' },
      schema: {
        hide: true,
        querystring: z.object({
          status: optionalEnum(DELIVERY_STATUSES),
          platform: optionalEnum(PLATFORMS),
          source: optionalEnum(DELIVERY_SOURCES),
          after: boundedText(FIELD_LIMITS.id).optional(),
        }),
      },
    }, async (request, reply) => {
      const em = request.em;
      const { orgId } = principalOf(request);
      const { status, platform, source, after } = request.query;
      const [entries, products, customers, backlog] = await Promise.all([
        listDeliveries(em, orgId, { status, platform, source, after, limit: PAGE_SIZE }),
        listProducts(em, orgId),
        findCustomers(em, orgId, { limit: CUSTOMER_CHOICES }),
        outboxBacklog(em, orgId),
      ]);
      const heldLines: OrderLineKey[] = entries.flatMap((e) => e.items
        .flatMap((i) => (i.outcome === 'held' && i.productId
          ? [{ source: e.platform, externalOrderId: e.externalOrderId, productId: i.productId }]
          : [])));
      const recorded = await recordedOrderLines(em, orgId, heldLines);
      return sendPage(reply, webhookLogPage(pageContextOf(request), {
        entries,
        status,
        platform,
        source,
        more: entries.length === PAGE_SIZE,
        products: new Map(products.map((l) => [l.product.id, l])),
        customers,
        recorded,
        workflowUrl,
        backlog,
      }));
    });
  };
}
