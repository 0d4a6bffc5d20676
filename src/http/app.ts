import Fastify, { type FastifyInstance } from 'fastify';
import type { DestinationStream } from 'pino';
import formbody from '@fastify/formbody';
import multipart from '@fastify/multipart';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { jsonSchemaTransform, serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import type { Config } from '../config';
import type { Orm } from '../db/orm';
import type { DevMailbox } from '../dev/dev-mailbox';
import type { FileStorage } from '../storage/file-storage';
import type { WorkflowStarter } from '../temporal/client';
import { CatalogueListings } from '../services/catalogue-listings';
import { activeTracing } from '../telemetry/tracing';
import type { WorkflowDispatcher } from '../temporal/dispatcher';
import { registerPrincipal } from './plugins/principal';
import { registerRequestEntityManager } from './plugins/request-em';
import { registerErrorHandler, sendError } from './plugins/error-handler';
import { loggableError, loggableUrl } from '../telemetry/logging';
import { registerMetrics, type ApiMetrics } from './metrics';
import { registerSession } from './plugins/session';
import { loadKeyRing, type KeyRing } from '../security/key-ring';
import { OWASP_SCRYPT_COST, PasswordHasher } from '../security/password-hashing';
import { sessionSecretOf } from '../security/session-secret';
import { sealPlainSecrets } from '../services/secret-sealing';
import { codecRoutes } from './routes/codec';
import { dashboardRoutes } from './routes/dashboard';
import { healthRoutes } from './routes/health';
import { purchaseRoutes } from './routes/api/purchases';
import { purchaseAccessRoutes } from './routes/api/purchase-access';
import { unmatchedSkuRoutes } from './routes/api/unmatched-skus';
import { versionNotificationRoutes } from './routes/api/version-notifications';
import { webhookRoutes } from './routes/webhooks';
import { licenseKeyRoutes } from './routes/api/license-keys';
import { purchaseLicenseRoutes } from './routes/api/purchase-license';
import { licenseApiRoutes } from './routes/licenses';
import { productRoutes } from './routes/api/products';
import { versionRoutes } from './routes/api/versions';
import { customerRoutes } from './routes/api/customers';
import { webhookLogRoutes } from './routes/api/webhook-log';
import { settingsRoutes } from './routes/api/settings';
import { openApiWebhooks, outboundEventRoutes } from './routes/api/outbound-events';
import { reportRoutes } from './routes/api/reports';
import { customerPageRoutes } from './routes/customer';
import { downloadCompleteRoutes } from './routes/download-complete';

/** What the composition root (roles.ts' API role, or a test) gives buildApp. */
export interface AppOptions {
  config: Readonly<Config>;
  orm: Orm;
  /** Pinged by /readyz. */
  starter: WorkflowStarter;
  /** The process's outbox dispatcher: routes that record outbox rows tell it whose, so their workflows start at once. */
  dispatcher: Pick<WorkflowDispatcher, 'recorded'>;
  storage: FileStorage;
  /** Injected for tests of expiry; the real clock otherwise. */
  clock: () => Date;
  /** URL of the Temporal Web UI (embedded; else TEMPORAL_UI_URL): links from the webhook log, the codec's CORS origin. */
  temporalUiUrl?: string;
  /** The embedded dev mailbox, when SMTP_URL is unset (shown in the dashboard). */
  devMailbox?: DevMailbox;
  /** Where the log goes: stdout, unless a test reads it. */
  logStream?: DestinationStream;
}

/** Everything the routes use: the options plus what the app makes for itself. */
export interface AppDeps extends AppOptions {
  /** Seals and opens integration secrets (SECRETS_KEY, or the key file under DATA_DIR). */
  keyRing: KeyRing;
  /** The service's own Prometheus series (GET /metrics). */
  metrics: ApiMetrics;
  /** GET /api/products' answers, kept per organisation while its catalogue version stands. */
  catalogueListings: CatalogueListings;
  /** Staff passwords, at the configured scrypt cost (PASSWORD_SCRYPT_N). */
  passwords: PasswordHasher;
}

/** Memory for kept product listings: 16 MB holds about 300 catalogues of 100 products. */
const CATALOGUE_LISTINGS_BYTES = 16 * 1024 * 1024;

/** Probes and scrapes: no trace of their own. */
const UNTRACED_PATHS = /^\/(metrics|healthz|readyz)(\?|$)/;

/**
 * Builds the whole HTTP app (API, webhooks, dashboard, customer pages); never listens. The outbox
 * dispatcher and housekeeping beside it are the API role's (`buildApiApp` in roles.ts).
 */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger: {
      level: options.config.logLevel,
      // Secrets travel in headers, tokens in paths, secrets and emails in query strings, values in
      // database errors: keep them out of the logs.
      redact: ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers.cookie'],
      serializers: { req: (req) => ({ method: req.method, url: loggableUrl(req.url) }), err: loggableError },
      stream: options.logStream,
    },
    trustProxy: options.config.trustProxy,
    bodyLimit: 1024 * 1024,
    // A path parameter may be an SKU as a platform sent it (up to 1000 characters, each up to three
    // percent-encoded bytes: map-and-replay); ids are far shorter and checked by their routes.
    routerOptions: { maxParamLength: 3100 },
    // Errors Fastify raises before routing (bad URL encoding, an over-long path parameter) keep the
    // error contract too, without echoing the path back.
    frameworkErrors: (error, request, reply) =>
      sendError(request, reply, error.statusCode ?? 400, error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'path parameter too long' : 'malformed URL'),
  });
  if (activeTracing().enabled) {
    // Before any route, so each request's span is the parent of what its handler does (the outbox
    // rows it records keep that span's context for their dispatch). Lifecycle hooks get no spans.
    // Loaded here: tracing is off by default (src/telemetry/tracing.ts).
    const { default: FastifyOtelInstrumentation } = await import('@fastify/otel');
    const instrumentation = new FastifyOtelInstrumentation({ instrumentHooks: false, ignorePaths: ({ url }) => UNTRACED_PATHS.test(url) });
    await app.register(instrumentation.plugin());
  }
  const keyRing = await loadKeyRing(options.config);
  const metrics = await registerMetrics(app, options.orm, options.clock);
  // Secrets stored before sealing existed are sealed once, by whichever process starts first.
  app.addHook('onReady', async () => {
    await sealPlainSecrets(options.orm.em.fork(), keyRing);
  });
  const deps: AppDeps = {
    ...options, temporalUiUrl: options.temporalUiUrl ?? options.config.temporal.uiUrl, keyRing, metrics,
    catalogueListings: new CatalogueListings(CATALOGUE_LISTINGS_BYTES),
    passwords: new PasswordHasher(options.config.passwordHashCost),
  };
  if (deps.passwords.cost.N < OWASP_SCRYPT_COST.N) {
    app.log.warn(`PASSWORD_SCRYPT_N=${deps.passwords.cost.N} is below OWASP's ${OWASP_SCRYPT_COST.N}: staff passwords are cheaper to guess (meant for tests only)`);
  }

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  registerErrorHandler(app);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Digital product delivery service', version: '1.0.0' },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer' },
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        },
      },
      security: [{ bearer: [] }, { apiKey: [] }],
      // The requests the service sends to integrators' endpoints (decisions §13).
      webhooks: openApiWebhooks(),
    },
    transform: jsonSchemaTransform,
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  await app.register(formbody);
  await app.register(multipart, {
    limits: { fileSize: deps.config.maxUploadBytes, files: deps.config.maxUploadFiles, fields: 100, fieldSize: 64 * 1024 },
  });
  await registerSession(app, { ...deps, secret: await sessionSecretOf(deps.config) });
  registerRequestEntityManager(app, deps.orm);
  registerPrincipal(app, deps.clock);

  await app.register(healthRoutes(deps));
  await app.register(purchaseRoutes(deps));
  await app.register(purchaseAccessRoutes(deps));
  await app.register(webhookRoutes(deps));
  await app.register(productRoutes(deps));
  await app.register(licenseKeyRoutes);
  await app.register(purchaseLicenseRoutes(deps));
  await app.register(licenseApiRoutes(deps), { prefix: '/licenses' });
  await app.register(versionRoutes(deps));
  await app.register(versionNotificationRoutes(deps));
  await app.register(customerRoutes);
  await app.register(webhookLogRoutes);
  await app.register(unmatchedSkuRoutes(deps));
  await app.register(settingsRoutes(deps));
  await app.register(outboundEventRoutes(deps));
  await app.register(reportRoutes);
  await app.register(customerPageRoutes(deps));
  await app.register(downloadCompleteRoutes(deps));
  await app.register(codecRoutes(deps));
  await app.register(dashboardRoutes(deps));
  return app;
}
