import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { boundedText, FIELD_LIMITS } from '../../../domain/field-limits';
import { deactivateForStaff, staffLicense, StaffLicenseJsonSchema } from '../../../licenses/license-activations';
import { principalOf } from '../../plugins/principal';
import type { AppDeps } from '../../app';
import { ErrorSchema } from './products';

const PurchaseParams = z.object({ purchaseId: boundedText(FIELD_LIMITS.id).describe('the purchase id (UUID)') });

/** A purchase's license key (decisions §14): members read it and its activations, owners and admins free a seat. */
export function purchaseLicenseRoutes(deps: AppDeps): FastifyPluginAsyncZod {
  return async (app) => {
    app.get('/api/purchases/:purchaseId/license', {
      config: { access: 'member' },
      schema: {
        summary: 'A purchase\'s license key and its activations',
        description: '404 when the purchase has no key (its product issues none, or it still waits for a pool key).',
        tags: ['license keys'],
        params: PurchaseParams,
        response: { 200: StaffLicenseJsonSchema, 401: ErrorSchema, 403: ErrorSchema, 404: ErrorSchema },
      },
    }, async (request) => staffLicense(request.em, principalOf(request).orgId, request.params.purchaseId));

    app.delete('/api/purchases/:purchaseId/license/activations/:instanceId', {
      config: { access: 'admin' },
      schema: {
        summary: 'Deactivate an installation of a purchase\'s license key (owner/admin)',
        description: 'Frees its seat and records `license.deactivated`; an installation deactivated already stays so. '
          + 'Unknown purchase, key or installation: 404.',
        tags: ['license keys'],
        params: PurchaseParams.extend({ instanceId: boundedText(FIELD_LIMITS.id).describe('the installation\'s instanceId') }),
        response: { 204: z.null().describe('deactivated'), 401: ErrorSchema, 403: ErrorSchema, 404: ErrorSchema },
      },
    }, async (request, reply) => {
      await deactivateForStaff(request.em, principalOf(request).orgId, request.params.purchaseId, request.params.instanceId);
      deps.dispatcher.recorded(principalOf(request).orgId);
      return reply.code(204).send(null);
    });
  };
}
