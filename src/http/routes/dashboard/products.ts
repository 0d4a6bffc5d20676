import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { PRODUCT_STATUSES } from '../../../domain/statuses';
import { LICENSE_SOURCES, type LicensePolicy } from '../../../domain/license-keys';
import { poolCounts } from '../../../licenses/license-pool';
import { licenseKeyCounts } from '../../../licenses/license-store';
import {
  createProduct, DownloadLimitInput, getProduct, LicenseKeysInput, listProducts, typedWholeNumber, updateProduct, type ProductListing,
} from '../../../services/products';
import { eligibleBuyers, productNotifications } from '../../../services/version-notifications';
import { listVersions, type VersionJson } from '../../../services/versions';
import type { AppDeps } from '../../app';
import { formBodyOnly } from '../../form-body';
import { principalOf } from '../../plugins/principal';
import { CSRF_BODY_FIELD } from '../../plugins/session';
import { licensePoolCounts, productPage, productsPage, versionNoticesSection, type VersionNotices } from '../../views/products';
import { pageContextOf } from './guard';
import { sendFragment, sendPage, seeOther } from './replies';
import { boundedText, FIELD_LIMITS } from '../../../domain/field-limits';

const pageConfig = { dashboard: 'member', errorFormat: 'page' } as const;
const formConfig = { dashboard: 'member', errorFormat: 'html-fragment' } as const;
const Params = z.object({ productId: boundedText(FIELD_LIMITS.id) });

/** Who a notice of the active version would email, whether that version is new, and the notices sent (decisions §12). */
async function noticesOf(em: EntityManager, orgId: string, listing: ProductListing, versions: VersionJson[]): Promise<VersionNotices> {
  const productId = listing.product.id;
  const [wouldEmail, notifications] = await Promise.all([eligibleBuyers(em, orgId, productId), productNotifications(em, orgId, productId)]);
  const activeAt = versions.find((v) => v.id === listing.activeVersion?.id)?.createdAt;
  const activeIsNewer = activeAt !== undefined && versions.some((v) => v.id !== listing.activeVersion?.id && v.createdAt < activeAt);
  return { wouldEmail, activeIsNewer, notifications };
}

/** The SKU textarea: one per line or comma-separated; blanks ignored. */
const skuList = (text: string | undefined): string[] =>
  (text ?? '').split(/[\n,]/).map((s) => s.trim()).filter((s) => s !== '');

const ProductForm = z.object({
  ...CSRF_BODY_FIELD,
  name: boundedText(500).optional(),
  slug: boundedText(200).optional(),
  description: boundedText(20_000).optional(),
  skus: boundedText(50_000).optional(),
  /** What was typed: digits, or empty for unlimited. */
  downloadLimit: DownloadLimitInput.optional(),
  /** Absent when the form does not offer the choice (a member's, read-only): the policy stays as it is. */
  licenseSource: z.enum(['none', ...LICENSE_SOURCES]).optional(),
  /** What was typed: digits, or empty for unlimited. */
  licenseActivationLimit: z.preprocess(typedWholeNumber, LicenseKeysInput.unwrap().shape.activationLimit),
  /** A checkbox: sent ("on") only when ticked. */
  stampPdfs: z.literal('on').optional(),
});
type ProductFormBody = z.infer<typeof ProductForm>;

/** The form's key policy as the service takes it; undefined leaves it as it is. */
function licenseKeysOf(body: ProductFormBody): LicensePolicy | undefined {
  const { licenseSource: source, licenseActivationLimit: activationLimit } = body;
  if (source === undefined) return undefined;
  return source === 'none' ? null : { source, activationLimit: activationLimit ?? null };
}

/** A pool product's key counts; null for a product whose keys are not uploaded. */
/** The pool's counts of a pool product (the listing is the organisation's: no second check). */
async function poolCountsOf(em: EntityManager, listing: ProductListing) {
  return listing.product.licenseKeys?.source === 'pool' ? licenseKeyCounts(em, listing.product.id) : null;
}

/**
 * Products, their versions and the notices of a new version. Writes go through the same services as
 * /api/products; uploads go from the browser straight to POST /api/products/{id}/versions (streamed,
 * with a progress bar), and "notify buyers" to POST /api/products/{id}/versions/{versionId}/notify.
 */
export const productPageRoutes = (deps: Pick<AppDeps, 'storage'>): FastifyPluginAsyncZod => async (app) => {
  app.get('/products', { config: pageConfig, schema: { hide: true } }, async (request, reply) => {
    const products = await listProducts(request.em, principalOf(request).orgId);
    return sendPage(reply, productsPage(pageContextOf(request), products));
  });

  app.post('/products', {
    config: formConfig, preValidation: formBodyOnly, schema: { hide: true, body: ProductForm },
  }, async (request, reply) => {
    const { name, slug, description, skus, downloadLimit } = request.body;
    const created = await createProduct(request.em, principalOf(request).orgId, {
      name, slug, description, skus: skuList(skus), downloadLimit, licenseKeys: licenseKeysOf(request.body),
      stampPdfs: request.body.stampPdfs === 'on',
    });
    return seeOther(request, reply, `/products/${created.id}?done=created`);
  });

  app.get('/products/:productId', {
    config: pageConfig,
    schema: { hide: true, params: Params, querystring: z.object({ done: boundedText(20).optional() }) },
  }, async (request, reply) => {
    const em = request.em;
    const { orgId } = principalOf(request);
    const listing = await getProduct(em, orgId, request.params.productId);
    const versions = await listVersions(em, orgId, listing.product.id);
    const notices = await noticesOf(em, orgId, listing, versions);
    const pool = await poolCountsOf(em, listing);
    return sendPage(reply, productPage(pageContextOf(request), listing, versions, notices, pool, request.query.done));
  });

  // The pool's counts alone: the page fetches them again (htmx) after an upload of keys.
  app.get('/products/:productId/license-keys', {
    config: formConfig, schema: { hide: true, params: Params },
  }, async (request, reply) => {
    const { orgId } = principalOf(request);
    return sendFragment(reply, licensePoolCounts(request.params.productId, await poolCounts(request.em, orgId, request.params.productId)));
  });

  // The "Version notices" section alone: the page polls it (htmx) while a notice is being sent.
  app.get('/products/:productId/notices', {
    config: formConfig, schema: { hide: true, params: Params },
  }, async (request, reply) => {
    const em = request.em;
    const { orgId } = principalOf(request);
    const listing = await getProduct(em, orgId, request.params.productId);
    const notices = await noticesOf(em, orgId, listing, await listVersions(em, orgId, listing.product.id));
    return sendFragment(reply, versionNoticesSection(pageContextOf(request), listing, notices));
  });

  app.post('/products/:productId', {
    config: formConfig, preValidation: formBodyOnly, schema: { hide: true, params: Params, body: ProductForm },
  }, async (request, reply) => {
    const { name, slug, description, skus, downloadLimit } = request.body;
    const product = await updateProduct(request.em, deps.storage, principalOf(request), request.params.productId, {
      name, slug, description, skus: skuList(skus), downloadLimit, licenseKeys: licenseKeysOf(request.body),
      stampPdfs: request.body.stampPdfs === 'on',
    });
    return seeOther(request, reply, `/products/${product.id}?done=saved`);
  });

  app.post('/products/:productId/status', {
    config: formConfig,
    preValidation: formBodyOnly,
    schema: { hide: true, params: Params, body: z.object({ ...CSRF_BODY_FIELD, status: z.enum(PRODUCT_STATUSES) }) },
  }, async (request, reply) => {
    const { status } = request.body;
    const product = await updateProduct(request.em, deps.storage, principalOf(request), request.params.productId, { status });
    return seeOther(request, reply, `/products/${product.id}?done=${status}`);
  });

  app.post('/products/:productId/active-version', {
    config: formConfig,
    preValidation: formBodyOnly,
    schema: { hide: true, params: Params, body: z.object({ ...CSRF_BODY_FIELD, versionId: boundedText(FIELD_LIMITS.id) }) },
  }, async (request, reply) => {
    const product = await updateProduct(request.em, deps.storage, principalOf(request), request.params.productId, {
      activeVersionId: request.body.versionId,
    });
    return seeOther(request, reply, `/products/${product.id}?done=activated`);
  });
};
