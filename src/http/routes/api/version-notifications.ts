import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { boundedText, FIELD_LIMITS } from '../../../domain/field-limits';
import { findProduct } from '../../../services/products';
import {
  eligibleBuyers, NotificationProgressSchema, notifyBuyers, productNotifications,
} from '../../../services/version-notifications';
import { principalOf } from '../../plugins/principal';
import type { AppDeps } from '../../app';
import { ProductParamsSchema } from './products';

/** "Notify buyers" of a new version (decisions §12) and its progress. */
export function versionNotificationRoutes(deps: AppDeps): FastifyPluginAsyncZod {
  return async (app) => {
    app.post('/api/products/:productId/versions/:versionId/notify', {
      config: { access: 'admin' },
      schema: {
        summary: 'Email every buyer of the product one notice of this (active) version, with a fresh link to it',
        description: 'Every purchase that is neither revoked nor a test, whose customer did not unsubscribe from update notices, '
          + `gets one email, at most UPDATE_NOTICE_RATE per second per organisation (now ${deps.config.updateNoticeRate}), sent by one `
          + 'long-running workflow that survives restarts. Once per version: asking again answers the same notification '
          + '(200) and sends nothing new; the first ask is 202. Only the product\'s active version: 409 otherwise.',
        tags: ['products'],
        params: ProductParamsSchema.extend({ versionId: boundedText(FIELD_LIMITS.id).describe('the version id (UUID)') }),
        response: { 200: NotificationProgressSchema, 202: NotificationProgressSchema },
      },
    }, async (request, reply) => {
      const principal = principalOf(request);
      const { created, ...progress } = await notifyBuyers(
        request.em, principal.orgId, request.params.productId, request.params.versionId, principal.userId, deps.clock(),
      );
      if (created) deps.dispatcher.recorded(principal.orgId);
      return reply.code(created ? 202 : 200).send(progress);
    });

    app.get('/api/products/:productId/notifications', {
      config: { access: 'member' },
      schema: {
        summary: 'The product\'s version notifications with their progress (sent, failed, left), and who a new one would email',
        tags: ['products'],
        params: ProductParamsSchema,
        response: { 200: z.object({ wouldEmail: z.number().int(), notifications: z.array(NotificationProgressSchema) }) },
      },
    }, async (request) => {
      const { orgId } = principalOf(request);
      await findProduct(request.em, orgId, request.params.productId);
      return {
        wouldEmail: await eligibleBuyers(request.em, orgId, request.params.productId),
        notifications: await productNotifications(request.em, orgId, request.params.productId),
      };
    });
  };
}
