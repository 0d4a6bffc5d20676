import { ApplicationFailure } from '@temporalio/common';
import { DefaultLogger, NativeConnection, Runtime, Worker, type ActivityInboundCallsInterceptor, type WorkerOptions } from '@temporalio/worker';
import { createActivities, type ActivityDeps } from '../../activities';
import type { KeyRing } from '../security/key-ring';
import { encryptedPayloads } from './encryption-codec';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import { databaseErrorMessage, isDatabaseError } from '../telemetry/logging';
import { activeTracing } from '../telemetry/tracing';
import { prebuiltBundle, WORKFLOW_INTERCEPTOR_MODULES, WORKFLOWS_PATH } from './workflow-bundle';

export interface WorkerSetup {
  deps: ActivityDeps;
  address: string;
  namespace: string;
  taskQueue: string;
  /** Tests pass a bundle made once; otherwise the build's bundle (traced when tracing is on), else one made at start. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** How long running activities may finish after shutdown is requested. */
  shutdownGraceTime?: WorkerOptions['shutdownGraceTime'];
  maxCachedWorkflows: number;
  /** Encrypts every payload this worker hands Temporal, decrypts what it reads. */
  keyRing: KeyRing;
  /** Runs plain (unencrypted) inputs instead of refusing them: histories started before encryption. */
  acceptPlaintextPayloads: boolean;
  /** `host:port` of the Prometheus endpoint of the SDK's and the service's worker metrics. */
  metricsAddress?: string;
}

/**
 * The SDK's runtime, installed once per process before the first worker: logs at WARN (the SDK logs
 * every worker state change and the whole workflow bundle at INFO; the service's own INFO is about
 * requests), and its metrics, with the service's own series, on a Prometheus endpoint
 * (WORKER_METRICS_ADDRESS; undefined: none). A runtime installed before (tests) is kept.
 */
function installTemporalRuntime(metricsAddress: string | undefined): void {
  try {
    Runtime.install({
      logger: new DefaultLogger('WARN'),
      ...(metricsAddress ? { telemetryOptions: { metrics: { prometheus: { bindAddress: metricsAddress } } } } : {}),
    });
  } catch {
    // Already installed in this process.
  }
}

/**
 * A database error that escapes an activity leaves it as a (retryable) failure of its class and
 * SQLSTATE: its message holds the statement with its values (the ORM writes them in), and the
 * worker logs the failure and Temporal keeps it.
 */
const withoutDatabaseValues: ActivityInboundCallsInterceptor = {
  async execute(input, next) {
    try {
      return await next(input);
    } catch (error) {
      if (!isDatabaseError(error)) throw error;
      throw ApplicationFailure.create({ message: databaseErrorMessage(error), type: error.name });
    }
  },
};

/**
 * Tracing on: the traced bundle (OpenTelemetry's workflow interceptors, their spans leaving the
 * sandbox through the `exporter` sink) and activities run in a span that continues their
 * workflow's trace. Off: the plain bundle and no span. Either way, activities run inside
 * `withoutDatabaseValues`. A bundle given by the caller (tests) is used as it is.
 */
function workflowAndTracingOptions(bundle: WorkerOptions['workflowBundle']): Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath' | 'interceptors' | 'sinks'> {
  const tracing = activeTracing();
  const source = bundle ?? prebuiltBundle(tracing.enabled);
  const workflows = source ? { workflowBundle: source } : { workflowsPath: WORKFLOWS_PATH };
  const databaseValuesOut = () => ({ inbound: withoutDatabaseValues });
  if (!tracing.enabled) return { ...workflows, interceptors: { activity: [databaseValuesOut] } };
  return {
    ...workflows,
    interceptors: {
      // The span's first (outermost), so the span records the failure as it leaves the activity.
      activity: [
        (ctx) => ({ inbound: new OpenTelemetryActivityInboundInterceptor(ctx), outbound: new OpenTelemetryActivityOutboundInterceptor(ctx) }),
        databaseValuesOut,
      ],
      ...(source ? {} : { workflowModules: WORKFLOW_INTERCEPTOR_MODULES }),
    },
    sinks: { exporter: makeWorkflowExporter(tracing.spanProcessor, tracing.resource) },
  };
}

/** The worker role: runs every workflow and activity of the service on one task queue. */
export async function createWorker(setup: WorkerSetup): Promise<{ worker: Worker; connection: NativeConnection }> {
  installTemporalRuntime(setup.metricsAddress);
  const connection = await NativeConnection.connect({ address: setup.address });
  const worker = await Worker.create({
    connection,
    namespace: setup.namespace,
    taskQueue: setup.taskQueue,
    activities: createActivities(setup.deps),
    ...workflowAndTracingOptions(setup.workflowBundle),
    shutdownGraceTime: setup.shutdownGraceTime ?? '30s',
    maxCachedWorkflows: setup.maxCachedWorkflows,
    dataConverter: encryptedPayloads(setup.keyRing, { acceptPlaintext: setup.acceptPlaintextPayloads }),
  });
  return { worker, connection };
}
