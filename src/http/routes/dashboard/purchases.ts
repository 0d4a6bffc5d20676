import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { findCustomers } from '../../../purchases/customer-store';
import { searchPurchases } from '../../../purchases/purchase-store';
import { searchCustomers } from '../../../purchases/customer-store';
import { listProducts } from '../../../services/products';
import { resendPurchaseLink } from '../../../services/download-rearm';
import { purchaseDetail } from '../../../services/purchase-detail';
import { assertSkuSeen, heldSales } from '../../../services/unmatched-replay';
import { unmatchedSkus } from '../../../services/webhook-log';
import { formBodyOnly } from '../../form-body';
import { principalOf } from '../../plugins/principal';
import { CSRF_BODY_FIELD } from '../../plugins/session';
import { notice } from '../../views/layout';
import { isLive } from '../../views/products';
import { purchaseDetailPage } from '../../views/purchase-detail';
import { customersPage, purchasesPage } from '../../views/purchases';
import { unmatchedPage } from '../../views/unmatched';
import type { AppDeps } from '../../app';
import { pageContextOf } from './guard';
import { sendFragment, sendPage } from './replies';
import { boundedText, FIELD_LIMITS } from '../../../domain/field-limits';

/** Rows per list page: the newest; search narrows them down. */
const LIST_LIMIT = 200;
/** Existing customers offered in the sale form's drop-down (the newest). */
const CUSTOMER_CHOICES = 500;

const pageConfig = { dashboard: 'member', errorFormat: 'page' } as const;
const Search = z.object({ q: boundedText(FIELD_LIMITS.search).default('') });

/**
 * Purchases (search, the unmatched-SKU counter and a page per unmatched SKU, Create Manual Purchase, resend link, one
 * purchase's page) and Customers.
 * A manual purchase is posted by the browser to POST /api/purchases, like any API client's.
 */
export function purchasePageRoutes(deps: AppDeps): FastifyPluginAsyncZod {
  return async (app) => {
    app.get('/purchases', { config: pageConfig, schema: { hide: true, querystring: Search } }, async (request, reply) => {
      const em = request.em;
      const { orgId } = principalOf(request);
      const q = request.query.q.trim();
      const [rows, unmatched, products, customers] = await Promise.all([
        searchPurchases(em, orgId, q, LIST_LIMIT),
        unmatchedSkus(em, orgId),
        listProducts(em, orgId),
        findCustomers(em, orgId, { limit: CUSTOMER_CHOICES }),
      ]);
      return sendPage(reply, purchasesPage(pageContextOf(request), {
        rows, q, limit: LIST_LIMIT, unmatched, liveProducts: products.filter(isLive), customers,
      }));
    });

    // One purchase: any member sees it; the actions on it (owner/admin) call the API (decisions §9–§11).
    app.get('/purchases/:purchaseId', {
      config: pageConfig, schema: { hide: true, params: z.object({ purchaseId: boundedText(FIELD_LIMITS.id) }) },
    }, async (request, reply) => {
      const detail = await purchaseDetail(request.em, principalOf(request), request.params.purchaseId, deps.clock());
      return sendPage(reply, purchaseDetailPage(pageContextOf(request), detail));
    });

    // One unknown SKU (decisions §12): the sales it held back; owners and admins map it and deliver them
    // through the API. The SKU is in the query string, so any character of it survives the trip.
    app.get('/unmatched', {
      config: pageConfig, schema: { hide: true, querystring: z.object({ sku: boundedText(FIELD_LIMITS.sku) }) },
    }, async (request, reply) => {
      const em = request.em;
      const { orgId } = principalOf(request);
      await assertSkuSeen(em, orgId, request.query.sku);
      const [held, products] = await Promise.all([heldSales(em, orgId, request.query.sku), listProducts(em, orgId)]);
      return sendPage(reply, unmatchedPage(pageContextOf(request), { held, products }));
    });

    app.post('/purchases/:purchaseId/resend', {
      config: { dashboard: 'member', errorFormat: 'html-fragment' },
      preValidation: formBodyOnly,
      schema: { hide: true, params: z.object({ purchaseId: boundedText(FIELD_LIMITS.id) }), body: z.object(CSRF_BODY_FIELD) },
    }, async (request, reply) => {
      const principal = principalOf(request);
      // No link goes out for a revoked purchase (decisions §9): a 409 says so rather than promise one.
      const { linkSentTo } = await resendPurchaseLink(
        request.em, principal.orgId, request.params.purchaseId, { userId: principal.userId, via: principal.via }, deps.clock(),
      );
      deps.dispatcher.recorded(principal.orgId);
      return sendFragment(reply, notice(`A fresh link is on its way to ${linkSentTo}.`));
    });

    app.get('/customers', { config: pageConfig, schema: { hide: true, querystring: Search } }, async (request, reply) => {
      const q = request.query.q.trim();
      const rows = await searchCustomers(request.em, principalOf(request).orgId, q, LIST_LIMIT);
      return sendPage(reply, customersPage(pageContextOf(request), rows, q, LIST_LIMIT));
    });
  };
}
