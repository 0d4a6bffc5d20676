import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { PLATFORMS } from '../../../domain/platforms';
import { apiKeyInfo, ApiKeyInfoSchema, refreshApiKey } from '../../../services/api-keys';
import {
  configureIntegration, IntegrationInputSchema, IntegrationJsonSchema, IntegrationListItemSchema, listIntegrations,
} from '../../../services/integration-settings';
import {
  configureReconciliation, reconciliationSettings, ReconciliationInputSchema, ReconciliationJsonSchema, runReconciliationNow,
} from '../../../services/reconciliation';
import {
  organisationSettings, OrganisationSettingsInputSchema, OrganisationSettingsSchema, updateOrganisationSettings,
} from '../../../services/organisation-settings';
import { principalOf } from '../../plugins/principal';
import type { AppDeps } from '../../app';
import { boundedText, FIELD_LIMITS } from '../../../domain/field-limits';
import { ADAPTERS } from '../../../webhooks/registry';

/** The OpenAPI text of the integration routes, from the adapters' declarations (as the Integrations page reads them). */
const INTEGRATIONS_SUMMARY = `The ${ADAPTERS.length} sales platforms (${ADAPTERS.map((a) => a.platform).join(', ')}): `
  + 'configured or not, the webhook URL to give each, and the health of its deliveries';
const INTEGRATION_PUT_DESCRIPTION = [
  'Body: the platform\'s secret field (`secret` is accepted for `privateKey` too):',
  '',
  ...ADAPTERS.map((a) => `- ${a.platform}: \`{${a.secretField.field}}\` — ${a.secretField.label}`
    + (a.routing.kind === 'shared'
      ? `; also an optional \`{accountId}\` (${a.routing.accountIdHint.replace(/\.$/, '')}), which another organisation must not have registered (409)`
      : '')),
  '',
  'Unknown platform: 404.',
].join('\n');

/** Settings: the organisation's support address, reminder delay and the sales platforms' secrets (owner/admin), each user's own API key (any role). */
export function settingsRoutes(deps: AppDeps): FastifyPluginAsyncZod {
  return async (app) => {
    app.get('/api/settings/integrations', {
      config: { access: 'admin' },
      schema: {
        summary: INTEGRATIONS_SUMMARY,
        tags: ['settings'],
        response: { 200: z.array(IntegrationListItemSchema) },
      },
    }, async (request) => listIntegrations(request.em, principalOf(request).orgId, deps.config.baseUrl, deps.clock()));

    app.put('/api/settings/integrations/:platform', {
      config: { access: 'admin' },
      schema: {
        summary: 'Set a platform\'s secret (never returned)',
        description: INTEGRATION_PUT_DESCRIPTION,
        tags: ['settings'],
        // A string, not an enum: an unknown platform is a resource that does not exist (404), not bad input.
        params: z.object({ platform: boundedText(FIELD_LIMITS.id).describe(PLATFORMS.join(', ')) }),
        body: IntegrationInputSchema,
        response: { 200: IntegrationJsonSchema },
      },
    }, async (request) => configureIntegration(
      request.em, deps.keyRing, principalOf(request).orgId, request.params.platform, request.body, deps.config.baseUrl,
    ));

    const platformParam = z.object({ platform: boundedText(FIELD_LIMITS.id).describe(PLATFORMS.join(', ')) });
    const reconcileDeps = () => ({
      keyRing: deps.keyRing, schedules: deps.starter.reconcileSchedules, allowPrivate: deps.config.outbound.allowPrivate, now: deps.clock(),
    });

    app.get('/api/settings/integrations/:platform/reconciliation', {
      config: { access: 'admin' },
      schema: {
        summary: 'Missed-webhook reconciliation of a platform: on or off, paused, the last run and the next',
        tags: ['settings'],
        params: platformParam,
        response: { 200: ReconciliationJsonSchema },
      },
    }, async (request) => reconciliationSettings(request.em, reconcileDeps(), principalOf(request).orgId, request.params.platform));

    app.put('/api/settings/integrations/:platform/reconciliation', {
      config: { access: 'admin' },
      schema: {
        summary: 'Turn missed-webhook reconciliation on or off, with the platform\'s read-only order-API credentials (never returned)',
        description: 'Enabled: the integration\'s schedule reads the platform\'s order list every RECONCILE_INTERVAL and records the paid '
          + 'orders no webhook brought. Saving the credentials again resumes a schedule the platform\'s refusal paused. Unknown platform: 404; '
          + 'a platform whose order list is not read yet, or that has none: 400.',
        tags: ['settings'],
        params: platformParam,
        body: ReconciliationInputSchema,
        response: { 200: ReconciliationJsonSchema },
      },
    }, async (request) => configureReconciliation(request.em, reconcileDeps(), principalOf(request).orgId, request.params.platform, request.body));

    app.post('/api/settings/integrations/:platform/reconciliation/run', {
      config: { access: 'admin' },
      schema: {
        summary: 'Run reconciliation now (a run already going makes this one skipped)',
        description: '409 when reconciliation is off or paused.',
        tags: ['settings'],
        params: platformParam,
        response: { 202: z.object({ started: z.literal(true) }) },
      },
    }, async (request, reply) => {
      await runReconciliationNow(request.em, reconcileDeps(), principalOf(request).orgId, request.params.platform);
      return reply.code(202).send({ started: true as const });
    });

    app.get('/api/settings/organisation', {
      config: { access: 'admin' },
      schema: {
        summary: 'The organisation\'s settings: its name, the support address buyers are shown, the buyer reminder\'s delay',
        tags: ['settings'],
        response: { 200: OrganisationSettingsSchema },
      },
    }, async (request) => organisationSettings(request.em, principalOf(request).orgId));

    app.put('/api/settings/organisation', {
      config: { access: 'admin' },
      schema: {
        summary: 'Set the support address (shown on the "download limit reached" page) and the buyer reminder\'s delay',
        description: 'Body `{supportEmail, reminderAfterMinutes}`, each optional (absent: unchanged). `supportEmail`: an email '
          + 'address; empty or null removes it. `reminderAfterMinutes`: whole minutes from 1 to 525600 after a receipt was accepted '
          + 'at which a buyer who has completed no file transfer gets one reminder with a fresh link; null turns reminders off. '
          + 'A new value applies to purchases whose receipts go out after it; reminders already planned keep their time.',
        tags: ['settings'],
        body: OrganisationSettingsInputSchema,
        response: { 200: OrganisationSettingsSchema },
      },
    }, async (request) => updateOrganisationSettings(request.em, principalOf(request).orgId, request.body));

    app.get('/api/settings/api-key', {
      config: { access: 'member' },
      schema: {
        summary: 'The caller\'s own API key as the API Key page shows it (an addition to the spec)',
        tags: ['settings'],
        response: { 200: ApiKeyInfoSchema },
      },
    }, async (request) => apiKeyInfo(request.em, principalOf(request).userId));

    app.post('/api/settings/api-key/refresh', {
      config: { access: 'member' },
      schema: {
        summary: 'Mint a new key for the caller; the previous one fails at once',
        description: 'The full key is in this answer only; afterwards only its prefix is shown.',
        tags: ['settings'],
        response: { 200: z.object({ apiKey: z.string() }) },
      },
    }, async (request) => ({ apiKey: await refreshApiKey(request.em, principalOf(request).userId) }));
  };
}
