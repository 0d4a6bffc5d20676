import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config';
import { API_NODE_FLAGS } from '../../src/http/api-process';
import { WORKER_NODE_FLAGS, WORKER_PROCESS_ENV } from '../../src/temporal/worker-process';

const root = path.join(__dirname, '..', '..');

interface ComposeService {
  image?: string;
  build?: string | { context?: string; dockerfile?: string };
  command?: string[];
  entrypoint?: string[];
  environment?: Record<string, string | number> | string[];
  depends_on?: Record<string, { condition: string }> | string[];
  healthcheck?: { test: string[] | string };
  ports?: string[];
  deploy?: { replicas?: number };
  networks?: string[];
  configs?: Array<{ source: string; target: string }>;
}
interface ComposeFile {
  services: Record<string, ComposeService>;
  networks: Record<string, { ipam?: { config?: Array<{ subnet: string }> } }>;
  configs: Record<string, { content: string }>;
}

/** The environment as a map, whichever of compose's two spellings is used. */
function env(service: ComposeService): Record<string, string> {
  const e = service.environment ?? {};
  if (Array.isArray(e)) {
    return Object.fromEntries(e.map((line) => [line.split('=')[0], line.slice(line.indexOf('=') + 1)]));
  }
  return Object.fromEntries(Object.entries(e).map(([k, v]) => [k, String(v)]));
}

function dependsOn(service: ComposeService): string[] {
  const d = service.depends_on ?? [];
  return Array.isArray(d) ? d : Object.keys(d);
}

describe('docker-compose.yml (production shape)', () => {
  // `merge: true` resolves the `<<: *app-env` merge keys the way docker compose does.
  const compose = parse(readFileSync(path.join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as ComposeFile;
  const dockerfile = readFileSync(path.join(root, 'Dockerfile'), 'utf8');

  it('publishes nothing unauthenticated beyond the host\'s loopback: only the proxy in front of the API listens outside', () => {
    expect(compose.services.api.ports ?? []).toEqual([]);
    expect(compose.services.proxy.ports).toEqual(['80:80', '443:443']);
    for (const [name, service] of Object.entries(compose.services)) {
      for (const port of service.ports ?? []) {
        if (name === 'proxy') continue;
        expect([name, port]).toEqual([name, expect.stringMatching(/^127\.0\.0\.1:/)]);
      }
    }
  });

  it('runs what npm run start:cluster runs, with the same values', () => {
    const defaults = loadConfig({});
    expect(compose.services.api.deploy?.replicas).toBe(defaults.cluster.apiProcesses);
    expect(compose.services.worker.deploy?.replicas).toBe(defaults.cluster.workerProcesses);
    expect(Number(env(compose.services.temporal).NUM_HISTORY_SHARDS)).toBe(defaults.cluster.historyShards);
    expect(compose.services.temporal.image).toMatch(/:1\.29\.1$/);
    expect(readFileSync(path.join(root, 'scripts', 'setup-temporal.js'), 'utf8')).toContain("SERVER_VERSION = 'v1.29.1'");
    // Workers export metrics Prometheus scrapes.
    expect(env(compose.services.worker).WORKER_METRICS_ADDRESS).toBe('0.0.0.0:9464');
    expect(compose.services).toHaveProperty('prometheus');
    expect(env(compose.services['temporal-ui']).TEMPORAL_CODEC_ENDPOINT).toMatch(/\/codec$/);
  });

  it('has every service of the production shape', () => {
    for (const name of ['postgres', 'temporal', 'temporal-ui', 'mailpit', 'api', 'worker', 'proxy', 'prometheus']) {
      expect(compose.services).toHaveProperty(name);
    }
    expect(compose.services.postgres.image).toMatch(/^postgres:1[4-9]/);
    expect(compose.services.temporal.image).toMatch(/^temporalio\/auto-setup:/);
    expect(compose.services['temporal-ui'].image).toMatch(/^temporalio\/ui:/);
    expect(compose.services.mailpit.image).toMatch(/^axllent\/mailpit/);
  });

  it('runs Temporal on PostgreSQL', () => {
    const temporal = env(compose.services.temporal);
    expect(temporal.DB).toBe('postgres12');
    expect(temporal.POSTGRES_SEEDS).toBe('postgres');
    expect(dependsOn(compose.services.temporal)).toContain('postgres');
    expect(env(compose.services['temporal-ui']).TEMPORAL_ADDRESS).toBe('temporal:7233');
  });

  it('builds api and worker from the Dockerfile with their own entry points', () => {
    for (const name of ['api', 'worker']) {
      const build = compose.services[name].build;
      const spec = typeof build === 'string' ? { context: build } : build;
      expect(spec?.context).toBe('.');
      expect(spec?.dockerfile ?? 'Dockerfile').toBe('Dockerfile');
    }
    expect(compose.services.api.command).toEqual(['node', ...API_NODE_FLAGS, 'dist/src/http/server.js']);
    expect(compose.services.worker.command).toEqual(['node', ...WORKER_NODE_FLAGS, 'dist/src/temporal/worker-main.js']);
  });

  it('starts the worker role with its memory bounds, in compose as with npm run start:worker', () => {
    expect(env(compose.services.worker)).toMatchObject(WORKER_PROCESS_ENV);
    const scripts = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    const envPrefix = Object.entries(WORKER_PROCESS_ENV).map(([name, value]) => `${name}=${value}`).join(' ');
    expect(scripts['start:worker']).toBe(`${envPrefix} node ${WORKER_NODE_FLAGS.join(' ')} dist/src/temporal/worker-main.js`);
  });

  it('starts the API role with its young generation bounded, in compose, the image and npm run start:api alike', () => {
    const scripts = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts['start:api']).toBe(`node ${API_NODE_FLAGS.join(' ')} dist/src/http/server.js`);
    expect(dockerfile).toContain(`CMD ${JSON.stringify(['node', ...API_NODE_FLAGS, 'dist/src/http/server.js']).replaceAll(',', ', ')}`);
  });

  it('wires api and worker to PostgreSQL, Temporal and the mail catcher', () => {
    for (const name of ['api', 'worker']) {
      const e = env(compose.services[name]);
      expect(e.DATABASE_URL).toMatch(/^postgres:\/\/[^@]+@postgres:5432\/\w+$/);
      expect(e.TEMPORAL_ADDRESS).toBe('temporal:7233');
      expect(e.STORAGE_URL).toMatch(/^s3:\/\/[a-z0-9.-]+\/\w+$/);
      expect(e.S3_ENDPOINT).toBe('http://minio:9000');
      expect(e.BASE_URL).toBeTruthy();
      expect(dependsOn(compose.services[name])).toEqual(expect.arrayContaining(['postgres', 'temporal']));
    }
    expect(env(compose.services.worker).SMTP_URL).toBe('smtp://mailpit:1025');
    expect(env(compose.services.api).HOST).toBe('0.0.0.0');
    expect(compose.services.api.healthcheck).toBeDefined();
  });

  it('keeps product files in object storage whose bucket exists before an api starts; api and worker share DATA_DIR', () => {
    const volumes = (name: string) => (compose.services[name] as { volumes?: string[] }).volumes ?? [];
    const apiData = volumes('api').find((v) => v.endsWith(':/data'));
    expect(apiData).toBeDefined();
    expect(volumes('worker')).toContain(apiData);
    expect(env(compose.services.api).FILE_STORAGE_DIR).toBeUndefined();
    const bucket = /^s3:\/\/([^/]+)/.exec(env(compose.services.api).STORAGE_URL)![1];
    expect(JSON.stringify(compose.services['minio-init'].entrypoint)).toContain(`store/${bucket}`);
    expect(dependsOn(compose.services.api)).toContain('minio-init');
  });

  it('builds on Debian slim, not Alpine, on the Node major the npm scripts run on, as the non-root node user', () => {
    const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
    const scriptsMajor = /^(\d+)\./.exec(pkg.devDependencies.node)![1];
    const bases = [...dockerfile.matchAll(/^FROM\s+(\S+)/gim)].map((m) => m[1]);
    expect(bases.length).toBeGreaterThanOrEqual(2); // multi-stage
    for (const base of bases) {
      expect(base).toBe(`node:${scriptsMajor}-bookworm-slim`);
      expect(base).not.toMatch(/alpine/i);
    }
    expect(dockerfile).toMatch(/^RUN npm ci\b/m);
    expect(dockerfile).toMatch(/npm run build/);
    expect(dockerfile).toMatch(/npm prune --omit=dev/);
    expect(dockerfile).toMatch(/^USER node$/m);
  });

  describe('security review L4 and L10', () => {
    const caddyfile = compose.configs.caddyfile.content;
    const dbUser = (url: string) => /^postgres:\/\/([^:@]+)/.exec(url)?.[1];

    it('terminates TLS at the proxy, whose address is the https BASE_URL, and keeps /metrics and /readyz to compose\'s network', () => {
      // A site address that is a host name (not `:80`, not http://) is served over https by Caddy.
      const site = /^(\S+) \{/m.exec(caddyfile)?.[1];
      expect(site).toBe('${PUBLIC_HOST:-localhost}');
      for (const name of ['api', 'worker']) expect(env(compose.services[name]).BASE_URL).toBe('https://${PUBLIC_HOST:-localhost}');
      expect(env(compose.services['temporal-ui']).TEMPORAL_CODEC_ENDPOINT).toBe('https://${PUBLIC_HOST:-localhost}/codec');
      const matcher = /@(\w+) path ([^\n]+)/.exec(caddyfile);
      expect(matcher?.[2].split(' ')).toEqual(expect.arrayContaining(['/metrics', '/readyz']));
      expect(caddyfile).toContain(`respond @${matcher?.[1]} 404`);
    });

    it('trusts X-Forwarded-For from the proxy\'s subnet only, a network of the proxy and the api replicas alone', () => {
      const edge = Object.entries(compose.networks).find(([, network]) => network.ipam?.config?.length)!;
      expect(env(compose.services.api).TRUST_PROXY).toBe(edge[1].ipam!.config![0].subnet);
      const onEdge = Object.entries(compose.services).filter(([, service]) => service.networks?.includes(edge[0])).map(([name]) => name);
      expect(onEdge.sort()).toEqual(['api', 'proxy']);
      expect(compose.services.proxy.networks).toEqual([edge[0]]);
    });

    it('gives api and worker a database role of rows only, migrations the owner role, Temporal a role of its own', () => {
      const app = dbUser(env(compose.services.api).DATABASE_URL);
      expect(dbUser(env(compose.services.worker).DATABASE_URL)).toBe(app);
      const owner = dbUser(env(compose.services.migrate).DATABASE_URL);
      const temporal = env(compose.services.temporal).POSTGRES_USER;
      expect(new Set([app, owner, temporal, 'postgres']).size).toBe(4);
      const roles = compose.configs['postgres-roles'].content;
      expect(compose.services.postgres.configs?.map((c) => c.source)).toContain('postgres-roles');
      expect(roles).toContain(`alter default privileges for role ${owner} in schema public grant select, insert, update, delete on tables to ${app};`);
      expect(roles).toContain(`alter database delivery owner to ${owner};`);
      expect(roles).not.toMatch(/superuser|grant all|createrole/i);
      expect(roles).toMatch(new RegExp(`create role ${temporal} login createdb password`));
    });

    it('gives api and worker a MinIO user whose policy reaches their bucket only, not MinIO\'s root', () => {
      const api = env(compose.services.api);
      const minio = env(compose.services.minio);
      expect(minio.MINIO_ROOT_USER).not.toBe(api.S3_ACCESS_KEY_ID);
      expect(minio.MINIO_ROOT_PASSWORD).not.toBe(api.S3_SECRET_ACCESS_KEY);
      const bucket = /^s3:\/\/([^/]+)/.exec(api.STORAGE_URL)![1];
      const policy = JSON.parse(compose.configs['minio-service-policy'].content) as { Statement: Array<{ Action: string[]; Resource: string[] }> };
      expect(policy.Statement.flatMap((s) => s.Resource).sort()).toEqual([`arn:aws:s3:::${bucket}`, `arn:aws:s3:::${bucket}/*`]);
      expect(policy.Statement.flatMap((s) => s.Action).every((action) => action.startsWith('s3:') && !action.includes('*'))).toBe(true);
      const init = JSON.stringify(compose.services['minio-init'].entrypoint);
      expect(init).toContain('mc admin policy attach store');
      expect(init).toContain('--user \\"$$S3_ACCESS_KEY_ID\\"');
    });

    it('lets no page of the API\'s origin call the Temporal UI\'s API (no CORS origins)', () => {
      expect(env(compose.services['temporal-ui']).TEMPORAL_CORS_ORIGINS).toBeUndefined();
    });
  });
});
