import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { MAX_KEYS_PER_UPLOAD, MAX_POOL_KEY_LENGTH } from '../../../domain/license-keys';
import { poolCounts, uploadPoolKeys } from '../../../licenses/license-pool';
import { principalOf } from '../../plugins/principal';
import { ErrorSchema, ProductParamsSchema } from './products';

/**
 * The largest upload's bytes: 10,000 keys of 200 characters, each up to 3 bytes in UTF-8 (a character
 * outside the BMP counts 2 of the 200 for its 4 bytes), with their line ends and some spaces around
 * them (trimmed). Past this the answer is 413.
 */
const UPLOAD_BODY_LIMIT = MAX_KEYS_PER_UPLOAD * (3 * MAX_POOL_KEY_LENGTH + 16) + 1024;

/** A product's license-key pool (decisions §14): owners and admins upload keys, members read the counts. */
export const licenseKeyRoutes: FastifyPluginAsyncZod = async (app) => {
  app.post('/api/products/:productId/license-keys', {
    config: { access: 'admin' },
    bodyLimit: UPLOAD_BODY_LIMIT,
    schema: {
      summary: 'Upload keys to a product\'s license-key pool',
      description: `Body \`text/plain\`: one key per line (blank lines ignored), at most ${MAX_POOL_KEY_LENGTH} characters each and `
        + `${MAX_KEYS_PER_UPLOAD} per request; otherwise 400 and nothing is added. A key already held (by any product) or repeated `
        + 'is counted in `duplicates`. Purchases waiting for a key get theirs at once, oldest purchase first, and their receipts go out. '
        + 'The product\'s `licenseKeys.source` must be `pool`.',
      tags: ['license keys'],
      params: ProductParamsSchema,
      consumes: ['text/plain'],
      body: z.string().max(UPLOAD_BODY_LIMIT).describe('one key per line'),
      response: {
        200: z.object({ added: z.number().int(), duplicates: z.number().int() }),
        400: ErrorSchema, 401: ErrorSchema, 403: ErrorSchema, 404: ErrorSchema, 413: ErrorSchema, 415: ErrorSchema,
      },
    },
  }, async (request) => uploadPoolKeys(request.em, principalOf(request).orgId, request.params.productId, request.body));

  app.get('/api/products/:productId/license-keys', {
    config: { access: 'member' },
    schema: {
      summary: 'Count a product\'s license keys',
      tags: ['license keys'],
      params: ProductParamsSchema,
      response: {
        200: z.object({
          available: z.number().int().describe('free keys in the pool'),
          issued: z.number().int().describe('keys issued to purchases'),
        }),
        401: ErrorSchema, 403: ErrorSchema, 404: ErrorSchema,
      },
    },
  }, async (request) => poolCounts(request.em, principalOf(request).orgId, request.params.productId));
};
