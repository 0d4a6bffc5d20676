import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { completeDownloadSession } from '../../services/downloads';
import type { AppDeps } from '../app';
import { requesterOf } from '../requester';
import { boundedText, FIELD_LIMITS } from '../../domain/field-limits';

/**
 * POST /webhooks/{orgId}/download-complete (decisions §4): called by the service's own downloader
 * at the end of a session; the token in the body is the capability. Its static last segment wins
 * over the platforms' `/webhooks/:orgId/:platform` in the router.
 */
export function downloadCompleteRoutes(deps: AppDeps): FastifyPluginAsyncZod {
  return async (app) => {
    app.post('/webhooks/:orgId/download-complete', {
      schema: {
        summary: 'End of a download session: marks the link used',
        description: 'JSON `{token}`. Marks the token used and writes a session entry in the activity log; a second '
          + 'call for the same token is 200 and writes nothing. Unknown token, or another organisation\'s: 404.',
        tags: ['webhooks'],
        security: [],
        params: z.object({ orgId: boundedText(FIELD_LIMITS.id) }),
        body: z.object({ token: boundedText(FIELD_LIMITS.token).min(1, 'token is required') }),
        response: {
          200: z.object({ ok: z.literal(true) }),
          400: z.object({ error: z.string() }),
          404: z.object({ error: z.string() }),
        },
      },
    }, async (request) => {
      await completeDownloadSession(
        request.em,
        request.params.orgId,
        request.body.token,
        requesterOf(request),
        deps.clock(),
      );
      return { ok: true as const };
    });
  };
}
