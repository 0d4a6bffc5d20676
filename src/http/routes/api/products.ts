import type { FastifyReply } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  CreatedProductSchema, CreateProductSchema, createProduct, getProduct, ProductListingSchema,
  ProductSchema, updateProduct, UpdateProductSchema,
} from '../../../services/products';
import type { AppDeps } from '../../app';
import { principalOf } from '../../plugins/principal';
import { boundedText, FIELD_LIMITS } from '../../../domain/field-limits';

/** The error contract of every JSON route: `{error}`. */
export const ErrorSchema = z.object({ error: z.string() });
export const ProductParamsSchema = z.object({ productId: boundedText(FIELD_LIMITS.id).describe('the product id (UUID)') });

/** Products of the caller's organisation (members read and write them). */
export const productRoutes = (deps: Pick<AppDeps, 'catalogueListings' | 'storage'>): FastifyPluginAsyncZod => async (app) => {
  app.get('/api/products', {
    config: { access: 'member' },
    schema: {
      summary: 'List the organisation\'s products with their active versions, oldest first',
      tags: ['products'],
      response: { 200: z.array(ProductListingSchema), 401: ErrorSchema, 403: ErrorSchema },
    },
  }, async (request, reply) => {
    const { orgId, catalogueVersion } = principalOf(request);
    const listings = await deps.catalogueListings.json(request.em, orgId, catalogueVersion);
    // Already JSON, built by PostgreSQL to the schema above: Fastify sends a string with a JSON type
    // as it is. The typed reply only takes the array itself; the text goes through the untyped one.
    return (reply as FastifyReply).type('application/json; charset=utf-8').send(listings);
  });

  app.get('/api/products/:productId', {
    config: { access: 'member' },
    schema: {
      summary: 'One product with its active version',
      tags: ['products'],
      params: ProductParamsSchema,
      response: { 200: ProductListingSchema, 401: ErrorSchema, 403: ErrorSchema, 404: ErrorSchema },
    },
  }, async (request) => getProduct(request.em, principalOf(request).orgId, request.params.productId));

  app.post('/api/products', {
    config: { access: 'member' },
    schema: {
      summary: 'Create a draft product',
      description: 'The slug is normalised to lowercase letters, digits and hyphens. The slug and every extra SKU map to at most one product of the organisation (409 otherwise).',
      tags: ['products'],
      body: CreateProductSchema,
      response: { 201: CreatedProductSchema, 400: ErrorSchema, 401: ErrorSchema, 403: ErrorSchema, 409: ErrorSchema },
    },
  }, async (request, reply) => {
    const created = await createProduct(request.em, principalOf(request).orgId, request.body);
    return reply.code(201).send(created);
  });

  app.put('/api/products/:productId', {
    config: { access: 'member' },
    schema: {
      summary: 'Merge fields into a product',
      description: 'Only the fields given change; keys other than those listed are ignored. `skus` replaces the extra SKUs; `activeVersionId` must be a ready version of this product (null clears it). '
        + 'Turning `stampPdfs` on checks the PDFs the product already has: one that cannot be stamped is 422 naming it.',
      tags: ['products'],
      params: ProductParamsSchema,
      body: UpdateProductSchema,
      response: { 200: ProductSchema, 400: ErrorSchema, 401: ErrorSchema, 403: ErrorSchema, 404: ErrorSchema, 409: ErrorSchema, 422: ErrorSchema },
    },
  }, async (request) => updateProduct(request.em, deps.storage, principalOf(request), request.params.productId, request.body));
};
