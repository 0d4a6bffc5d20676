import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { UnsupportedMediaTypeError } from '../../../domain/errors';
import { listVersions, uploadVersion, VersionSchema } from '../../../services/versions';
import { principalOf } from '../../plugins/principal';
import type { AppDeps } from '../../app';
import { ErrorSchema, ProductParamsSchema } from './products';
import { boundedText, FIELD_LIMITS } from '../../../domain/field-limits';

/**
 * Documents the multipart body for /openapi.json only: the parts are streamed by the handler, so
 * Fastify never sees a parsed body (it is null, hence nullish) and the handler checks each part.
 */
const VersionUploadSchema = z.object({
  version: boundedText(FIELD_LIMITS.versionLabel).describe('version label, e.g. "1.2.0"; unique per product'),
  file: z.array(z.string().meta({ format: 'binary' })).describe('one or more files, each in a part named "file"'),
  activate: z.enum(['true', 'false']).optional().describe('"true" makes this the product\'s active version'),
}).nullish();

async function multipartOnly(request: FastifyRequest): Promise<void> {
  if (!request.isMultipart()) {
    throw new UnsupportedMediaTypeError('send multipart/form-data: a "version" field and one or more "file" parts');
  }
}

/** Versions of a product of the caller's organisation, with their files. */
export function versionRoutes(deps: AppDeps): FastifyPluginAsyncZod {
  return async (app) => {
    app.post('/api/products/:productId/versions', {
      config: { access: 'member' },
      preValidation: multipartOnly,
      schema: {
        summary: 'Upload a new version of a product',
        description: `multipart/form-data; files are streamed to storage with their SHA-256 computed on the way. Each file may have at most ${deps.config.maxUploadBytes} bytes (MAX_UPLOAD_BYTES), all together ${deps.config.maxUploadRequestBytes} (MAX_UPLOAD_REQUEST_BYTES), at most ${deps.config.maxUploadFiles} files (MAX_UPLOAD_FILES); else 413 and nothing is kept. `
          + 'For a product with `stampPdfs`, a PDF that cannot be stamped (encrypted, unreadable, over 256 MiB) is 422 with the reason, and nothing is kept.',
        tags: ['products'],
        consumes: ['multipart/form-data'],
        params: ProductParamsSchema,
        body: VersionUploadSchema,
        response: {
          201: VersionSchema, 400: ErrorSchema, 401: ErrorSchema, 403: ErrorSchema, 404: ErrorSchema,
          409: ErrorSchema, 413: ErrorSchema, 415: ErrorSchema, 422: ErrorSchema,
        },
      },
    }, async (request, reply) => {
      const version = await uploadVersion(request.em, deps.storage, {
        orgId: principalOf(request).orgId,
        productId: request.params.productId,
        parts: request.parts(),
        maxFileBytes: deps.config.maxUploadBytes,
        maxRequestBytes: deps.config.maxUploadRequestBytes,
      });
      return reply.code(201).send(version);
    });

    app.get('/api/products/:productId/versions', {
      config: { access: 'member' },
      schema: {
        summary: 'The product\'s versions with their files, newest first',
        tags: ['products'],
        params: ProductParamsSchema,
        response: { 200: z.array(VersionSchema), 401: ErrorSchema, 403: ErrorSchema, 404: ErrorSchema },
      },
    }, async (request) => listVersions(request.em, principalOf(request).orgId, request.params.productId));
  };
}
