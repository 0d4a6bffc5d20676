import path from 'node:path';
import { z } from 'zod';
import type { DownloadLinkSettings } from './domain/download-links';
import { OWASP_SCRYPT_COST, type ScryptCost } from './security/password-hashing';

/** The named ranges proxy-addr (under Fastify) knows. */
const PROXY_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * TRUST_PROXY: unset → trust nobody; `10.0.0.1, 10.1.0.0/16, loopback` → those proxies. No hop
 * count: Fastify 5 fails closed on one (a count cannot check who the immediate peer is).
 */
function trustProxyOf(value: string | undefined): false | string[] {
  if (value === undefined || value === 'false') return false;
  const proxies = value.split(',').map((p) => p.trim()).filter((p) => p !== '');
  for (const proxy of proxies) {
    if (!PROXY_RANGE_NAMES.has(proxy) && !/^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(proxy)) {
      throw new Error(`Invalid configuration: TRUST_PROXY: "${proxy}" is not an IP address, a CIDR range or one of ${[...PROXY_RANGE_NAMES].join(', ')}`);
    }
  }
  return proxies;
}

/** `<n>s`, `<n>m`, `<n>h` or `<n>d` → milliseconds (decisions §1; days for the retention of events). */
export function parseDuration(text: string): number {
  const match = /^(\d+)([smhd])$/.exec(text.trim());
  if (!match) throw new Error(`"${text}" is not a duration like 30s, 15m, 1h or 5d`);
  const unit = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] as 's' | 'm' | 'h' | 'd'];
  return Number(match[1]) * unit;
}

/** OUTBOUND_RETRY_SCHEDULE: the waits before each retry of an outbound webhook, `5s,5m,30m`. */
function retryScheduleOf(text: string): number[] {
  try {
    const waits = text.split(',').map((part) => parseDuration(part));
    if (waits.length === 0 || waits.length > 20) throw new Error('give between 1 and 20 waits');
    return waits;
  } catch (err) {
    throw new Error(`Invalid configuration: OUTBOUND_RETRY_SCHEDULE: ${(err as Error).message}`);
  }
}

const optionalText = z
  .string()
  .trim()
  .transform((v) => (v === '' ? undefined : v))
  .optional();

const EnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default('127.0.0.1'),
  BASE_URL: optionalText.pipe(z.url({ protocol: /^https?$/, error: 'give the http(s) address the service is reached at, like https://downloads.example.com' }).optional()),
  SITE_URL: optionalText.pipe(z.url({ protocol: /^https?$/, error: 'give the http(s) address customers open links on, like https://downloads.example.com' }).optional()),
  DATA_DIR: z.string().default('./.data'),
  DATABASE_URL: optionalText,
  DATABASE_POOL_MAX: z.coerce.number().int().min(2).max(200).default(20),
  TEMPORAL_ADDRESS: optionalText,
  TEMPORAL_NAMESPACE: z.string().default('default'),
  TEMPORAL_TASK_QUEUE: z.string().default('fulfilment'),
  TEMPORAL_UI_PORT: z.coerce.number().int().min(0).max(65535).default(8233),
  TEMPORAL_UI_URL: optionalText.pipe(z.url({ protocol: /^https?$/ }).optional()),
  TEMPORAL_CLI_PATH: optionalText,
  TEMPORAL_ACCEPT_PLAINTEXT_PAYLOADS: z.enum(['true', 'false']).default('false'),
  SMTP_URL: optionalText,
  MAIL_FROM: z.string().default('downloads@localhost'),
  FILE_STORAGE_DIR: optionalText,
  STORAGE_URL: optionalText,
  S3_ENDPOINT: optionalText.pipe(z.url({ protocol: /^https?$/ }).optional()),
  S3_REGION: z.string().trim().min(1).default('us-east-1'),
  S3_ACCESS_KEY_ID: optionalText,
  S3_SECRET_ACCESS_KEY: optionalText,
  S3_FORCE_PATH_STYLE: z.enum(['true', 'false']).optional(),
  EMAIL_RETRY_WINDOW: z.string().default('1h'),
  DOWNLOAD_LINK_TTL: z.string().default('48h'),
  SESSION_SECRET: optionalText,
  SESSION_IDLE_TIMEOUT: z.string().default('2h'),
  // A power of two: scrypt takes no other N.
  PASSWORD_SCRYPT_N: z.coerce.number().int().min(2 ** 10).max(2 ** 20)
    .refine((n) => (n & (n - 1)) === 0, 'must be a power of two (131072 = 2^17 is the default)')
    .default(OWASP_SCRYPT_COST.N),
  SECRETS_KEY: optionalText,
  MAX_UPLOAD_BYTES: z.coerce.number().int().positive().default(5 * 1024 ** 3),
  MAX_UPLOAD_FILES: z.coerce.number().int().min(1).max(1000).default(20),
  MAX_UPLOAD_REQUEST_BYTES: z.coerce.number().int().positive().default(10 * 1024 ** 3),
  DISPATCH_LOOPS: z.coerce.number().int().min(0).max(16).default(2),
  DISPATCH_BATCH_SIZE: z.coerce.number().int().min(1).max(1000).default(100),
  UPDATE_NOTICE_RATE: z.coerce.number().int().min(1).max(1000).default(10),
  DISPATCH_POLL_INTERVAL: z.string().default('1s'),
  DISPATCH_MAX_REFUSALS: z.coerce.number().int().min(1).max(1000).default(10),
  DISPATCH_ORGANISATION_RUNS: z.coerce.number().int().min(1).default(20),
  DISPATCH_ENGINE_RUNS: z.coerce.number().int().min(1).default(20),
  DISPATCH_RESERVED_RUNS: z.coerce.number().int().min(0).default(5),
  DISPATCH_FAIRNESS_WINDOW: z.string().default('30s'),
  DISPATCH_ORGANISATION_BACKLOG: z.coerce.number().int().min(1).default(5000),
  WEBHOOK_MAX_IN_FLIGHT: z.coerce.number().int().min(1).default(256),
  WORKER_MAX_CACHED_WORKFLOWS: z.coerce.number().int().min(2).default(500),
  // The SDK's bind address is an IP and a port (no host names): `127.0.0.1:9464`, `[::1]:9464`.
  WORKER_METRICS_ADDRESS: z.string().trim()
    .regex(/^(off|\d{1,3}(\.\d{1,3}){3}:\d{1,5}|\[[0-9a-fA-F:.]+\]:\d{1,5})$/, 'give an IP address and a port, like 127.0.0.1:9464 or [::1]:9464, or off')
    .default('127.0.0.1:9464'),
  CLUSTER_API_PROCESSES: z.coerce.number().int().min(1).max(16).default(2),
  CLUSTER_WORKER_PROCESSES: z.coerce.number().int().min(1).max(16).default(2),
  CLUSTER_HISTORY_SHARDS: z.coerce.number().int().min(1).max(4096).default(4),
  TRUST_PROXY: optionalText,
  HOUSEKEEPING_INTERVAL: z.string().default('10m'),
  EVENT_RETENTION: z.string().default('30d'),
  OUTBOUND_RETRY_SCHEDULE: z.string().default('5s,5m,30m,2h,5h,10h,10h'),
  OUTBOUND_DISABLE_AFTER: z.string().default('5d'),
  OUTBOUND_WEBHOOKS_ALLOW_PRIVATE: z.enum(['true', 'false']).default('false'),
  RECONCILE_INTERVAL: z.string().default('15m'),
  RECONCILE_LOOKBACK: z.string().default('7d'),
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalText.pipe(z.url({ protocol: /^https?$/ }).optional()),
  OTEL_SERVICE_NAME: z.string().trim().min(1).default('delivery-service'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

/** How to reach an S3-compatible server (S3_*): unset credentials use the AWS SDK's default chain. */
export interface S3Settings {
  endpoint?: string;
  region: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  /** `https://endpoint/bucket/key` rather than `https://bucket.endpoint/key` (MinIO, SeaweedFS). */
  forcePathStyle: boolean;
}

/** STORAGE_URL `s3://bucket/prefix` → the bucket and the key prefix of product files. */
function objectStorageOf(url: string | undefined, s3: S3Settings): Config['objectStorage'] {
  if (url === undefined) return undefined;
  const match = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(\/[A-Za-z0-9/_.-]*)?$/.exec(url);
  if (!match) throw new Error(`Invalid configuration: STORAGE_URL: "${url}" is not s3://bucket or s3://bucket/prefix (a valid bucket name; the prefix of letters, digits, / _ . -)`);
  return { url, bucket: match[1], prefix: (match[2] ?? '').replace(/^\/+|\/+$/g, ''), s3 };
}

export interface Config {
  port: number;
  host: string;
  baseUrl: string;
  siteUrl: string;
  dataDir: string;
  /** Undefined: the embedded PostgreSQL under dataDir. */
  databaseUrl?: string;
  /** PostgreSQL connections each API or worker process opens at most (DATABASE_POOL_MAX, 20). */
  databasePoolMax: number;
  temporal: {
    /** Undefined: the embedded Temporal dev server. */
    address?: string;
    namespace: string;
    taskQueue: string;
    uiPort: number;
    /** A cluster's Temporal UI (TEMPORAL_UI_URL): links from the webhook log, and the codec endpoint's allowed origin. */
    uiUrl?: string;
    cliPath?: string;
    /** Workers run unencrypted inputs instead of refusing them (TEMPORAL_ACCEPT_PLAINTEXT_PAYLOADS): runs started before encryption. */
    acceptPlaintextPayloads: boolean;
  };
  /** Undefined: the in-process dev mailbox. */
  smtpUrl?: string;
  mailFrom: string;
  /** Product files on local disk (the default): FILE_STORAGE_DIR, else DATA_DIR/files. */
  fileStorageDir: string;
  /** Product files in S3-compatible object storage instead (STORAGE_URL), for more than one API host. */
  objectStorage?: { url: string; bucket: string; prefix: string; s3: S3Settings };
  emailRetryWindowMs: number;
  /** Links are built on SITE_URL and work DOWNLOAD_LINK_TTL from issue and from each opening (decisions §6: 48 h). */
  downloadLinks: DownloadLinkSettings;
  /** Version update notices sent per second per organisation, at most (UPDATE_NOTICE_RATE, decisions §12). */
  updateNoticeRate: number;
  /** Undefined: generated once and kept under dataDir. */
  sessionSecret?: string;
  /** A dashboard session unused this long ends (SESSION_IDLE_TIMEOUT, 2 h), besides the 12-hour cap. */
  sessionIdleTimeoutMs: number;
  /**
   * scrypt's cost for staff passwords (PASSWORD_SCRYPT_N; OWASP's 2^17, 128 MiB, by default). The
   * tests lower it so that seeding hundreds of accounts costs milliseconds, not minutes; in
   * production never go below the default.
   */
  passwordHashCost: Readonly<ScryptCost>;
  /** The key ring of integration secrets and Temporal payloads (SECRETS_KEY); undefined: the key file under dataDir. */
  secretsKey?: string;
  maxUploadBytes: number;
  /** Files in one upload request (MAX_UPLOAD_FILES). */
  maxUploadFiles: number;
  /** All files of one upload request together (MAX_UPLOAD_REQUEST_BYTES). */
  maxUploadRequestBytes: number;
  /** The outbox dispatcher of each API process (loops 0: this process dispatches nothing). */
  dispatch: {
    loops: number; batchSize: number; pollIntervalMs: number;
    /** Refusals by the engine (not its absence) after which a row becomes a dead letter (DISPATCH_MAX_REFUSALS). */
    maxRefusals: number;
    /** Webhook fulfilment runs one organisation may have in the engine before its next starts wait (DISPATCH_ORGANISATION_RUNS). */
    runsPerOrganisation: number;
    /**
     * Webhook fulfilment runs all organisations together may have in the engine (DISPATCH_ENGINE_RUNS);
     * a place that frees goes to the organisation that started the fewest runs while its oldest due row waited.
     */
    engineRuns: number;
    /**
     * Of those, the places one organisation leaves to the others while any of them has runs in the
     * engine or sales waiting (DISPATCH_RESERVED_RUNS; it never holds fewer than one).
     */
    reservedRuns: number;
    /** How far back those starts are counted at most (DISPATCH_FAIRNESS_WINDOW). */
    fairnessWindowMs: number;
  };
  /**
   * Outbox rows one organisation may have waiting (DISPATCH_ORGANISATION_BACKLOG); past it its
   * webhook deliveries are answered 503 with Retry-After, and its platform retries them.
   */
  organisationBacklog: number;
  /** Webhook requests one process works on at once; more are answered 503 with Retry-After at once. */
  webhookMaxInFlight: number;
  /**
   * Runs a worker keeps in memory between their workflow tasks. The SDK's default (about 2,300 on
   * a 4 GB heap) let a launch-day backlog take the worker past 600 MB; past the cache a run is
   * replayed from its history, which costs the engine a history read.
   */
  workerMaxCachedWorkflows: number;
  /** The worker's Prometheus endpoint (WORKER_METRICS_ADDRESS, `host:port`); undefined (`off`): none. */
  workerMetricsAddress?: string;
  /** `npm run start:cluster`: processes of each role, and the Temporal server's history shards (fixed once its database exists). */
  cluster: { apiProcesses: number; workerProcesses: number; historyShards: number };
  /**
   * Which proxies may tell the client's address in X-Forwarded-For (TRUST_PROXY): false, the
   * default, trusts nobody; else the proxies' addresses and CIDR ranges (as Fastify takes them).
   */
  trustProxy: false | string[];
  /** How often an API process deletes expired rows (rate-limit counters, download coverage, sessions). */
  housekeepingIntervalMs: number;
  /**
   * Webhooks to integrators (decisions §13): events are kept `eventRetentionMs` (EVENT_RETENTION,
   * 30 days); a failed request is retried after each wait of `retryScheduleMs`
   * (OUTBOUND_RETRY_SCHEDULE); an endpoint failing for `disableAfterMs` (OUTBOUND_DISABLE_AFTER, 5
   * days) is disabled; `allowPrivate` (OUTBOUND_WEBHOOKS_ALLOW_PRIVATE, development and tests) lets
   * `http://` and non-public addresses through.
   */
  outbound: { eventRetentionMs: number; retryScheduleMs: number[]; disableAfterMs: number; allowPrivate: boolean };
  /**
   * Missed-webhook reconciliation (decisions §15): each enabled integration's schedule runs every
   * `intervalMs` (RECONCILE_INTERVAL, 15 min); a first run reads the orders of the last `lookbackMs`
   * (RECONCILE_LOOKBACK, 7 days). Order APIs follow the outbound address rules (`outbound.allowPrivate`).
   */
  reconcile: { intervalMs: number; lookbackMs: number };
  /**
   * OpenTelemetry traces: off unless OTEL_EXPORTER_OTLP_ENDPOINT names an OTLP/HTTP collector
   * (spans go to `<endpoint>/v1/traces`), under OTEL_SERVICE_NAME.
   */
  tracing: { otlpEndpoint?: string; serviceName: string };
  logLevel: z.infer<typeof EnvSchema>['LOG_LEVEL'];
}

function stripTrailingSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

/** The longest wait a Node.js timer takes (2^31 − 1 ms, about 24.8 days): past it, Node waits 1 ms instead. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

/**
 * The one place that reads the environment. A variable set to nothing (or spaces) counts as unset,
 * so `PORT=` is the default port, not port 0.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Readonly<Config> {
  const given = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value.trim() !== ''));
  const parsed = EnvSchema.safeParse(given);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`Invalid configuration: ${problems}`);
  }
  const e = parsed.data;
  const dataDir = path.resolve(e.DATA_DIR);
  const baseUrl = stripTrailingSlash(e.BASE_URL ?? `http://localhost:${e.PORT}`);
  // `longest`: for the waits of a timer of this process (and the fairness window, an SQL int of ms).
  const duration = (name: 'EMAIL_RETRY_WINDOW' | 'DOWNLOAD_LINK_TTL' | 'DISPATCH_POLL_INTERVAL' | 'HOUSEKEEPING_INTERVAL' | 'SESSION_IDLE_TIMEOUT' | 'EVENT_RETENTION' | 'OUTBOUND_DISABLE_AFTER' | 'RECONCILE_INTERVAL' | 'RECONCILE_LOOKBACK' | 'DISPATCH_FAIRNESS_WINDOW', longest = Infinity) => {
    let ms: number;
    try {
      ms = parseDuration(e[name]);
    } catch (err) {
      throw new Error(`Invalid configuration: ${name}: ${(err as Error).message}`);
    }
    // Zero means nothing useful in any of them (a receipt retried without end, a poll that never waits).
    if (ms === 0) throw new Error(`Invalid configuration: ${name}: give a duration longer than zero ("${e[name]}")`);
    if (ms > longest) throw new Error(`Invalid configuration: ${name}: give at most 24d ("${e[name]}")`);
    return ms;
  };
  const config: Config = {
    port: e.PORT,
    host: e.HOST,
    baseUrl,
    siteUrl: stripTrailingSlash(e.SITE_URL ?? baseUrl),
    dataDir,
    databaseUrl: e.DATABASE_URL,
    databasePoolMax: e.DATABASE_POOL_MAX,
    temporal: {
      address: e.TEMPORAL_ADDRESS,
      namespace: e.TEMPORAL_NAMESPACE,
      taskQueue: e.TEMPORAL_TASK_QUEUE,
      uiPort: e.TEMPORAL_UI_PORT,
      uiUrl: e.TEMPORAL_UI_URL,
      cliPath: e.TEMPORAL_CLI_PATH,
      acceptPlaintextPayloads: e.TEMPORAL_ACCEPT_PLAINTEXT_PAYLOADS === 'true',
    },
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM,
    fileStorageDir: path.resolve(e.FILE_STORAGE_DIR ?? path.join(dataDir, 'files')),
    objectStorage: objectStorageOf(e.STORAGE_URL, {
      endpoint: e.S3_ENDPOINT,
      region: e.S3_REGION,
      accessKeyId: e.S3_ACCESS_KEY_ID,
      secretAccessKey: e.S3_SECRET_ACCESS_KEY,
      forcePathStyle: e.S3_FORCE_PATH_STYLE === undefined ? e.S3_ENDPOINT !== undefined : e.S3_FORCE_PATH_STYLE === 'true',
    }),
    emailRetryWindowMs: duration('EMAIL_RETRY_WINDOW'),
    updateNoticeRate: e.UPDATE_NOTICE_RATE,
    downloadLinks: { siteUrl: stripTrailingSlash(e.SITE_URL ?? baseUrl), ttlMs: duration('DOWNLOAD_LINK_TTL') },
    sessionSecret: e.SESSION_SECRET,
    sessionIdleTimeoutMs: duration('SESSION_IDLE_TIMEOUT'),
    passwordHashCost: Object.freeze({ ...OWASP_SCRYPT_COST, N: e.PASSWORD_SCRYPT_N }),
    secretsKey: e.SECRETS_KEY,
    maxUploadBytes: e.MAX_UPLOAD_BYTES,
    maxUploadFiles: e.MAX_UPLOAD_FILES,
    maxUploadRequestBytes: e.MAX_UPLOAD_REQUEST_BYTES,
    dispatch: {
      loops: e.DISPATCH_LOOPS, batchSize: e.DISPATCH_BATCH_SIZE, pollIntervalMs: duration('DISPATCH_POLL_INTERVAL', LONGEST_TIMER_MS), maxRefusals: e.DISPATCH_MAX_REFUSALS,
      runsPerOrganisation: e.DISPATCH_ORGANISATION_RUNS, engineRuns: e.DISPATCH_ENGINE_RUNS, reservedRuns: e.DISPATCH_RESERVED_RUNS,
      fairnessWindowMs: duration('DISPATCH_FAIRNESS_WINDOW', LONGEST_TIMER_MS),
    },
    organisationBacklog: e.DISPATCH_ORGANISATION_BACKLOG,
    webhookMaxInFlight: e.WEBHOOK_MAX_IN_FLIGHT,
    workerMaxCachedWorkflows: e.WORKER_MAX_CACHED_WORKFLOWS,
    workerMetricsAddress: e.WORKER_METRICS_ADDRESS === 'off' ? undefined : e.WORKER_METRICS_ADDRESS,
    cluster: { apiProcesses: e.CLUSTER_API_PROCESSES, workerProcesses: e.CLUSTER_WORKER_PROCESSES, historyShards: e.CLUSTER_HISTORY_SHARDS },
    trustProxy: trustProxyOf(e.TRUST_PROXY),
    housekeepingIntervalMs: duration('HOUSEKEEPING_INTERVAL', LONGEST_TIMER_MS),
    outbound: {
      eventRetentionMs: duration('EVENT_RETENTION'),
      retryScheduleMs: retryScheduleOf(e.OUTBOUND_RETRY_SCHEDULE),
      disableAfterMs: duration('OUTBOUND_DISABLE_AFTER'),
      allowPrivate: e.OUTBOUND_WEBHOOKS_ALLOW_PRIVATE === 'true',
    },
    reconcile: { intervalMs: duration('RECONCILE_INTERVAL'), lookbackMs: duration('RECONCILE_LOOKBACK') },
    tracing: { otlpEndpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT && stripTrailingSlash(e.OTEL_EXPORTER_OTLP_ENDPOINT), serviceName: e.OTEL_SERVICE_NAME },
    logLevel: e.LOG_LEVEL,
  };
  return Object.freeze({ ...config, temporal: Object.freeze(config.temporal), dispatch: Object.freeze(config.dispatch), cluster: Object.freeze(config.cluster), tracing: Object.freeze(config.tracing), outbound: Object.freeze(config.outbound), reconcile: Object.freeze(config.reconcile) });
}
