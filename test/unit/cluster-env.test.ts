import { loadConfig } from '../../src/config';
import { clusterEnvironments } from '../../src/dev/cluster-env';

describe('npm run start:cluster gives every role one public SITE_URL (security review L11)', () => {
  const layout = { apiPorts: [41001, 41002], workerMetricsAddresses: ['127.0.0.1:41003', '127.0.0.1:41004'], temporalUiUrl: undefined };
  // What each process's config makes of its environment: the links it writes into pages and receipts.
  const siteUrls = (envs: ReturnType<typeof clusterEnvironments>) =>
    [...envs.apis, ...envs.workers].map((env) => loadConfig(env).downloadLinks.siteUrl);

  test('by default the first API process, in every API and worker process', () => {
    const envs = clusterEnvironments({ ...layout, siteUrl: undefined });
    expect(siteUrls(envs)).toEqual(Array(4).fill('http://localhost:41001'));
    expect(envs.apis.map((env) => loadConfig(env).baseUrl)).toEqual(['http://localhost:41001', 'http://localhost:41002']);
  });

  test('the operator\'s SITE_URL (a proxy in front of the API processes) when set', () => {
    expect(siteUrls(clusterEnvironments({ ...layout, siteUrl: 'https://downloads.example.com' }))).toEqual(Array(4).fill('https://downloads.example.com'));
  });
});
