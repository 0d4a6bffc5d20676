/**
 * What `npm run start:cluster` tells each of its processes beyond the common settings. Every role
 * gets the same public SITE_URL: links are written by the worker (receipts) as much as by the API,
 * and a worker left to the default would write `http://localhost:3000/d/…`, where nothing of the
 * cluster listens (security review L11).
 */
import { WORKER_PROCESS_ENV } from '../temporal/worker-process';

export interface ClusterLayout {
  /** SITE_URL as the operator set it (a proxy in front of the API processes), else undefined. */
  siteUrl: string | undefined;
  apiPorts: number[];
  /** Each worker's metrics endpoint, host:port. */
  workerMetricsAddresses: string[];
  /** The cluster's Temporal UI, when it runs. */
  temporalUiUrl: string | undefined;
}

export interface ClusterEnvironments {
  /** The public address of `/d/{token}` and `/my` in every role: the operator's, else the first API process. */
  siteUrl: string;
  apis: Array<Record<string, string>>;
  workers: Array<Record<string, string>>;
}

export function clusterEnvironments(layout: ClusterLayout): ClusterEnvironments {
  const siteUrl = layout.siteUrl || `http://localhost:${layout.apiPorts[0]}`;
  return {
    siteUrl,
    apis: layout.apiPorts.map((port) => ({
      PORT: String(port),
      BASE_URL: `http://localhost:${port}`,
      SITE_URL: siteUrl,
      ...(layout.temporalUiUrl ? { TEMPORAL_UI_URL: layout.temporalUiUrl } : {}),
    })),
    workers: layout.workerMetricsAddresses.map((address) => ({ ...WORKER_PROCESS_ENV, WORKER_METRICS_ADDRESS: address, SITE_URL: siteUrl })),
  };
}
