import { readFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig, parseDuration } from '../../src/config';

describe('config', () => {
  test('defaults of decisions §1', () => {
    const config = loadConfig({});
    expect(config.port).toBe(3000);
    expect(config.host).toBe('127.0.0.1');
    expect(config.baseUrl).toBe('http://localhost:3000');
    expect(config.siteUrl).toBe(config.baseUrl);
    expect(config.dataDir).toBe(path.resolve('.data'));
    expect(config.fileStorageDir).toBe(path.resolve('.data/files'));
    expect(config.databaseUrl).toBeUndefined();
    expect(config.databasePoolMax).toBe(20);
    expect(config.temporal).toEqual(expect.objectContaining({ address: undefined, namespace: 'default', taskQueue: 'fulfilment', uiPort: 8233, acceptPlaintextPayloads: false }));
    expect(config.smtpUrl).toBeUndefined();
    expect(config.mailFrom).toBe('downloads@localhost');
    expect(config.emailRetryWindowMs).toBe(3_600_000);
    expect(Object.isFrozen(config)).toBe(true);
  });

  test('BASE_URL follows PORT; SITE_URL follows BASE_URL; trailing slashes go', () => {
    expect(loadConfig({ PORT: '4000' }).baseUrl).toBe('http://localhost:4000');
    const config = loadConfig({ BASE_URL: 'https://shop.example/' });
    expect(config.baseUrl).toBe('https://shop.example');
    expect(config.siteUrl).toBe('https://shop.example');
    expect(loadConfig({ BASE_URL: 'https://a.example', SITE_URL: 'https://b.example' }).siteUrl).toBe('https://b.example');
  });

  test('an empty variable counts as unset', () => {
    expect(loadConfig({ DATABASE_URL: '' }).databaseUrl).toBeUndefined();
    // Not 0 (a random port, a dispatcher that never starts a run) nor the current folder.
    const config = loadConfig({ PORT: '', DISPATCH_LOOPS: ' ', DATA_DIR: '', TEMPORAL_UI_PORT: '', DISPATCH_RESERVED_RUNS: '' });
    expect(config.port).toBe(3000);
    expect(config.baseUrl).toBe('http://localhost:3000');
    expect(config.dispatch.loops).toBe(2);
    expect(config.dispatch.reservedRuns).toBe(5);
    expect(config.temporal.uiPort).toBe(8233);
    expect(config.dataDir).toBe(path.resolve('.data'));
  });

  test('addresses: BASE_URL, SITE_URL and TEMPORAL_UI_URL are http(s) URLs; the worker\'s metrics an IP and a port', () => {
    for (const name of ['BASE_URL', 'SITE_URL', 'TEMPORAL_UI_URL']) {
      expect(() => loadConfig({ [name]: 'downloads.example.com' })).toThrow(new RegExp(name));
      expect(() => loadConfig({ [name]: 'ftp://downloads.example.com' })).toThrow(new RegExp(name));
    }
    expect(loadConfig({ WORKER_METRICS_ADDRESS: '0.0.0.0:9500' }).workerMetricsAddress).toBe('0.0.0.0:9500');
    expect(loadConfig({ WORKER_METRICS_ADDRESS: '[::1]:9500' }).workerMetricsAddress).toBe('[::1]:9500');
    expect(loadConfig({ WORKER_METRICS_ADDRESS: 'off' }).workerMetricsAddress).toBeUndefined();
    for (const bad of ['localhost:9464', '9464', '127.0.0.1']) {
      expect(() => loadConfig({ WORKER_METRICS_ADDRESS: bad })).toThrow(/WORKER_METRICS_ADDRESS/);
    }
  });

  test('traces: off unless OTEL_EXPORTER_OTLP_ENDPOINT names an http(s) collector', () => {
    expect(loadConfig({}).tracing).toEqual({ otlpEndpoint: undefined, serviceName: 'delivery-service' });
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/', OTEL_SERVICE_NAME: 'shop-a' }).tracing)
      .toEqual({ otlpEndpoint: 'http://collector:4318', serviceName: 'shop-a' });
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT/);
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://collector:4317' })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT/);
  });

  test('staff passwords: OWASP\'s scrypt cost unless PASSWORD_SCRYPT_N lowers N (a power of two, 2^10 to 2^20)', () => {
    expect(loadConfig({}).passwordHashCost).toEqual({ N: 131072, r: 8, p: 1 });
    expect(loadConfig({ PASSWORD_SCRYPT_N: '1024' }).passwordHashCost).toEqual({ N: 1024, r: 8, p: 1 });
    expect(() => loadConfig({ PASSWORD_SCRYPT_N: '100000' })).toThrow('PASSWORD_SCRYPT_N: must be a power of two');
    expect(() => loadConfig({ PASSWORD_SCRYPT_N: '512' })).toThrow('PASSWORD_SCRYPT_N');
  });

  test('durations', () => {
    expect(parseDuration('30s')).toBe(30_000);
    expect(parseDuration('15m')).toBe(900_000);
    expect(parseDuration('2h')).toBe(7_200_000);
    expect(parseDuration('5d')).toBe(432_000_000);
    expect(() => parseDuration('1w')).toThrow(/duration/);
    expect(loadConfig({}).outbound).toEqual({
      eventRetentionMs: 30 * 86_400_000,
      retryScheduleMs: [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
      disableAfterMs: 5 * 86_400_000,
      allowPrivate: false,
    });
    expect(loadConfig({}).reconcile).toEqual({ intervalMs: 900_000, lookbackMs: 7 * 86_400_000 });
    expect(loadConfig({ RECONCILE_INTERVAL: '30s', RECONCILE_LOOKBACK: '1d' }).reconcile).toEqual({ intervalMs: 30_000, lookbackMs: 86_400_000 });
    expect(() => loadConfig({ RECONCILE_INTERVAL: 'often' })).toThrow(/RECONCILE_INTERVAL/);
    expect(() => loadConfig({ OUTBOUND_RETRY_SCHEDULE: '5s,,1m' })).toThrow(/OUTBOUND_RETRY_SCHEDULE/);
    expect(() => loadConfig({ OUTBOUND_WEBHOOKS_ALLOW_PRIVATE: 'yes' })).toThrow(/OUTBOUND_WEBHOOKS_ALLOW_PRIVATE/);
    expect(() => loadConfig({ EMAIL_RETRY_WINDOW: 'soon' })).toThrow(/EMAIL_RETRY_WINDOW/);
    // Zero is no setting: a receipt retried without end, a poll that never waits.
    for (const name of ['EMAIL_RETRY_WINDOW', 'DISPATCH_POLL_INTERVAL', 'RECONCILE_INTERVAL']) {
      expect(() => loadConfig({ [name]: '0s' })).toThrow(new RegExp(`${name}: .*longer than zero`));
    }
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/PORT/);
    // A Node.js timer waits at most 2^31 - 1 ms (24.8 days): past it, it fires every millisecond.
    for (const name of ['HOUSEKEEPING_INTERVAL', 'DISPATCH_POLL_INTERVAL', 'DISPATCH_FAIRNESS_WINDOW']) {
      expect(loadConfig({ [name]: '24d' })).toBeDefined();
      expect(() => loadConfig({ [name]: '25d' })).toThrow(new RegExp(`${name}: give at most 24d`));
    }
  });
});

test('every setting of the Config schema has its row in the README\'s configuration table', () => {
  const root = path.join(__dirname, '..', '..');
  const source = readFileSync(path.join(root, 'src', 'config.ts'), 'utf8');
  const schema = source.slice(source.indexOf('const EnvSchema'), source.indexOf('});', source.indexOf('const EnvSchema')));
  const settings = [...schema.matchAll(/^ {2}([A-Z][A-Z0-9_]+):/gm)].map((m) => m[1]);
  expect(settings.length).toBeGreaterThan(20);
  const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
  // A row names its variable first, or beside another (`PORT`, `HOST`).
  const rows = readme.split('\n').filter((line) => line.startsWith('| `')).map((line) => line.split('|')[1]);
  expect(settings.filter((name) => !rows.some((cell) => cell.includes(`\`${name}\``)))).toEqual([]);
});
