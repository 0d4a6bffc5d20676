import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { NotFoundError, TooManyRequestsError, ValidationError } from '../../../domain/errors';
import { clearRateLimit, hitRateLimit } from '../../../services/rate-limits';
import { clientAddressKey } from '../../client-address';
import { passwordChecksInFlight } from '../../password-checks';
import { SIGNIN_LIMITS } from './signin';
import { ROLES } from '../../../domain/statuses';
import { apiKeyInfo } from '../../../services/api-keys';
import type { Platform } from '../../../domain/platforms';
import { listIntegrations } from '../../../services/integration-settings';
import { reconciliationSettings } from '../../../services/reconciliation';
import { ORDER_LIST_CLIENTS } from '../../../webhooks/order-lists';
import { organisationSettings, reminderAfterMinutesFromForm, updateOrganisationSettings } from '../../../services/organisation-settings';
import { addUser } from '../../../services/organisations';
import { messageIdsOfOrganisation } from '../../../services/sent-emails';
import { endUserSessions, listSessions } from '../../../services/user-sessions';
import { changePassword, grantableRoles, listTeam, mayChangeRoleOf, removeMember, setRole } from '../../../services/team';
import { formBodyOnly } from '../../form-body';
import { principalOf } from '../../plugins/principal';
import { CSRF_BODY_FIELD } from '../../plugins/session';
import { notice } from '../../views/layout';
import {
  apiKeyPage, integrationsPage, type IntegrationReconciliation, mailboxPage, mailPage, organisationPage, passwordPage, sessionsPage, teamPage, webhooksPage,
} from '../../views/settings';
import { listAttempts, listEndpoints } from '../../../events/outbound-events';
import type { AppDeps } from '../../app';
import { pageContextOf } from './guard';
import { sendFragment, sendPage, seeOther } from './replies';
import { boundedText, FIELD_LIMITS } from '../../../domain/field-limits';

const member = { dashboard: 'member', errorFormat: 'page' } as const;
const admin = { dashboard: 'admin', errorFormat: 'page' } as const;
/** Form posts answer fragments that htmx swaps in next to the form. */
const memberForm = { dashboard: 'member', errorFormat: 'html-fragment' } as const;
const adminForm = { dashboard: 'admin', errorFormat: 'html-fragment' } as const;
/** Attempts Settings › Webhooks shows under each endpoint. */
const LATEST_ATTEMPTS = 10;


/**
 * Settings: API Key and Password are every user's own; Organisation (the support address),
 * Integrations, Webhooks (outbound events), Team and the Dev mailbox are organisation settings,
 * for owners and admins only.
 */
export function settingsRoutes(deps: AppDeps): FastifyPluginAsyncZod {
  return async (app) => {
    app.get('/settings', { config: member, schema: { hide: true } }, async (_request, reply) => reply.redirect('/settings/api-key', 303));

    app.get('/settings/api-key', { config: member, schema: { hide: true } }, async (request, reply) => {
      const info = await apiKeyInfo(request.em, principalOf(request).userId);
      return sendPage(reply, apiKeyPage(pageContextOf(request), info));
    });

    app.get('/settings/password', {
      config: member,
      schema: { hide: true, querystring: z.object({ changed: boundedText(FIELD_LIMITS.id).optional() }) },
    }, async (request, reply) => sendPage(reply, passwordPage(pageContextOf(request), request.query.changed !== undefined)));

    app.post('/settings/password', {
      config: memberForm,
      preValidation: formBodyOnly,
      schema: {
        hide: true,
        body: z.object({ ...CSRF_BODY_FIELD, current: boundedText(FIELD_LIMITS.password), password: boundedText(FIELD_LIMITS.password), confirm: boundedText(FIELD_LIMITS.password) }),
      },
    }, async (request, reply) => {
      const { current, password, confirm } = request.body;
      if (password !== confirm) throw new ValidationError('the two new passwords differ');
      const userId = principalOf(request).userId;
      // The current password is checked like a sign-in's: one check at a time per address, and a
      // session cannot guess the account's password faster than the sign-in page allows.
      const leave = passwordChecksInFlight.tryEnter(clientAddressKey(request.ip));
      if (!leave) throw new TooManyRequestsError('another password check from your address is in progress: try again in a moment');
      try {
        const attempts = `password-change:${userId}`;
        const verdict = await hitRateLimit(request.em, attempts, SIGNIN_LIMITS.perAccountAndIp, SIGNIN_LIMITS.windowMs, deps.clock());
        if (!verdict.allowed) {
          const wait = Math.max(1, Math.ceil((verdict.resetAt.getTime() - deps.clock().getTime()) / 1000));
          throw new TooManyRequestsError(`too many password change attempts: try again in ${Math.ceil(wait / 60)} min`, wait);
        }
        const hash = await changePassword(request.em, deps.passwords, userId, current, password);
        await clearRateLimit(request.em, attempts);
        // Every session made with the old password is over; this one continues as a new session.
        await endUserSessions(request.em, userId);
        await app.sessions.start(request, reply, userId, hash);
      } finally {
        leave();
      }
      return seeOther(request, reply, '/settings/password?changed=1');
    });

    app.get('/settings/sessions', { config: member, schema: { hide: true } }, async (request, reply) => {
      const ctx = pageContextOf(request);
      const sessions = await listSessions(request.em, ctx.user.id, deps.clock(), deps.config.sessionIdleTimeoutMs);
      return sendPage(reply, sessionsPage(ctx, sessions, request.session!.id));
    });

    app.post('/settings/sessions/end-all', {
      config: member,
      preValidation: formBodyOnly,
      schema: { hide: true, body: z.object(CSRF_BODY_FIELD) },
    }, async (request, reply) => {
      await endUserSessions(request.em, principalOf(request).userId);
      await app.sessions.end(request, reply);
      return reply.redirect('/signin', 303);
    });

    app.get('/settings/organisation', {
      config: admin,
      schema: { hide: true, querystring: z.object({ saved: boundedText(FIELD_LIMITS.id).optional() }) },
    }, async (request, reply) => {
      const settings = await organisationSettings(request.em, principalOf(request).orgId);
      return sendPage(reply, organisationPage(pageContextOf(request), settings, request.query.saved !== undefined));
    });

    // A form post rather than app.js's JSON to PUT /api/settings/organisation: that one leaves empty
    // fields out, and an empty field here means "no support address".
    app.post('/settings/organisation', {
      config: adminForm,
      preValidation: formBodyOnly,
      schema: { hide: true, body: z.object({ ...CSRF_BODY_FIELD, supportEmail: boundedText(FIELD_LIMITS.email).optional() }) },
    }, async (request, reply) => {
      await updateOrganisationSettings(request.em, principalOf(request).orgId, { supportEmail: request.body.supportEmail ?? '' });
      return seeOther(request, reply, '/settings/organisation?saved=1');
    });

    // A form of its own, so saving the support address never touches the reminder and the other way round.
    app.post('/settings/organisation/reminders', {
      config: adminForm,
      preValidation: formBodyOnly,
      schema: { hide: true, body: z.object({ ...CSRF_BODY_FIELD, reminderAfterMinutes: boundedText(FIELD_LIMITS.id).optional() }) },
    }, async (request, reply) => {
      const reminderAfterMinutes = reminderAfterMinutesFromForm(request.body.reminderAfterMinutes ?? '');
      await updateOrganisationSettings(request.em, principalOf(request).orgId, { reminderAfterMinutes });
      return seeOther(request, reply, '/settings/organisation?saved=1');
    });

    app.get('/settings/webhooks', { config: admin, schema: { hide: true } }, async (request, reply) => {
      const { orgId } = principalOf(request);
      const endpoints = await listEndpoints(request.em, orgId);
      const withAttempts = await Promise.all(endpoints.map(async (endpoint) => ({
        endpoint, attempts: await listAttempts(request.em, orgId, endpoint.id, { limit: LATEST_ATTEMPTS }),
      })));
      return sendPage(reply, webhooksPage(pageContextOf(request), withAttempts));
    });

    app.get('/settings/integrations', { config: admin, schema: { hide: true } }, async (request, reply) => {
      const { orgId } = principalOf(request);
      const integrations = await listIntegrations(request.em, orgId, deps.config.baseUrl, deps.clock());
      const reconciliations: Partial<Record<Platform, IntegrationReconciliation>> = {};
      for (const client of ORDER_LIST_CLIENTS) {
        const settings = await reconciliationSettings(request.em, { schedules: deps.starter.reconcileSchedules, now: deps.clock() }, orgId, client.platform);
        reconciliations[client.platform] = { client, settings };
      }
      return sendPage(reply, integrationsPage(pageContextOf(request), integrations, reconciliations));
    });

    app.get('/settings/team', { config: admin, schema: { hide: true } }, async (request, reply) => {
      const actor = principalOf(request);
      const team = await listTeam(request.em, actor.orgId);
      const rows = team.map((m) => {
        const changeable = mayChangeRoleOf(actor, m);
        return { ...m, settable: changeable ? grantableRoles(actor.role) : [], removable: changeable };
      });
      return sendPage(reply, teamPage(pageContextOf(request), rows, grantableRoles(actor.role)));
    });

    app.post('/settings/team', {
      config: adminForm,
      preValidation: formBodyOnly,
      schema: {
        hide: true,
        body: z.object({
          ...CSRF_BODY_FIELD,
          email: boundedText(FIELD_LIMITS.email).trim(),
          name: boundedText(FIELD_LIMITS.name).trim().optional(),
          role: z.enum(ROLES),
          password: boundedText(FIELD_LIMITS.password),
        }),
      },
    }, async (request, reply) => {
      const actor = principalOf(request);
      const { email, name, role, password } = request.body;
      if (!grantableRoles(actor.role).includes(role)) throw new ValidationError(`your role may not add a ${role}`);
      // The new user's API key is not shown here: it is theirs, to refresh on their own API Key page.
      await addUser(request.em, deps.passwords, actor.orgId, { email, name, role, password });
      reply.header('hx-refresh', 'true');
      return sendFragment(reply, notice(`${email} was added as ${role}.`));
    });

    app.post('/settings/team/:userId/role', {
      config: adminForm,
      preValidation: formBodyOnly,
      schema: { hide: true, params: z.object({ userId: boundedText(FIELD_LIMITS.id) }), body: z.object({ ...CSRF_BODY_FIELD, role: z.enum(ROLES) }) },
    }, async (request, reply) => {
      const actor = principalOf(request);
      await setRole(request.em, actor.orgId, actor, request.params.userId, request.body.role);
      return sendFragment(reply, notice(`Role set to ${request.body.role}.`));
    });

    app.post('/settings/team/:userId/remove', {
      config: adminForm,
      preValidation: formBodyOnly,
      schema: { hide: true, params: z.object({ userId: boundedText(FIELD_LIMITS.id) }), body: z.object(CSRF_BODY_FIELD) },
    }, async (request, reply) => {
      const actor = principalOf(request);
      await removeMember(request.em, actor.orgId, actor, request.params.userId);
      reply.header('hx-refresh', 'true');
      return sendFragment(reply, notice('Removed: their sessions have ended and their API key no longer works.'));
    });

    const mailbox = deps.devMailbox;
    if (mailbox) {
      /** The mailbox as this organisation may see it: only the mail sent on its behalf. */
      const ownMail = async (request: FastifyRequest) => {
        const all = mailbox.messages();
        const own = await messageIdsOfOrganisation(request.em, principalOf(request).orgId, all.flatMap((m) => (m.messageId ? [m.messageId] : [])));
        return all.filter((m) => m.messageId !== null && own.has(m.messageId));
      };
      const ownMailById = async (request: FastifyRequest, id: string) => {
        const mail = (await ownMail(request)).find((m) => m.id === id);
        if (!mail) throw new NotFoundError('no such email in the mailbox');
        return mail;
      };

      app.get('/settings/mailbox', { config: admin, schema: { hide: true } }, async (request, reply) =>
        sendPage(reply, mailboxPage(pageContextOf(request), await ownMail(request))));

      app.get('/settings/mailbox/:mailId', {
        config: admin,
        schema: { hide: true, params: z.object({ mailId: boundedText(FIELD_LIMITS.id) }) },
      }, async (request, reply) => sendPage(reply, mailPage(pageContextOf(request), await ownMailById(request, request.params.mailId))));

      // The HTML part as its own document, framed by the mail page: its inline styles are allowed
      // there and nothing else is (no scripts, no requests, a sandbox of its own).
      app.get('/settings/mailbox/:mailId/html', {
        config: admin,
        schema: { hide: true, params: z.object({ mailId: boundedText(FIELD_LIMITS.id) }) },
      }, async (request, reply) => {
        const mail = await ownMailById(request, request.params.mailId);
        reply.header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'self'; sandbox");
        return sendPage(reply, mail.html);
      });
    }
  };
}
