import { ApplicationFailure, IllegalStateError } from '@temporalio/common';
import {
  DefaultLogger, NativeConnection, Runtime, Worker, type ActivityInboundCallsInterceptor, type ActivityInterceptorsFactory, type LogLevel, type LogMetadata, type WorkerOptions,
} from '@temporalio/worker';
import { createActivities, createOutboundActivities, createReconcileActivities, type ActivityDeps } from '../../activities';
import { enabledReconciliations } from '../accounts/reconciliation-store';
import { outboundTaskQueue } from '../domain/outbound-events';
import type { KeyRing } from '../security/key-ring';
import { serviceClient } from './client';
import { encryptedPayloads } from './encryption-codec';
import { ReconcileSchedules } from './reconcile-schedules';
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
 * The SDK's logger, less one warning: a worker without workflows says at start that it does not
 * poll for workflow tasks, and the outbound deliveries' worker has none by design (its workflows
 * run on the main queue). Every other worker's copy of the warning still shows.
 */
export class SdkLogger extends DefaultLogger {
  override log(level: LogLevel, message: string, meta?: LogMetadata): void {
    const taskQueue = meta?.taskQueue;
    if (message.startsWith('No workflows registered') && typeof taskQueue === 'string' && taskQueue.endsWith(outboundTaskQueue(''))) return;
    super.log(level, message, meta);
  }
}

/**
 * The SDK's runtime, installed once per process before the first worker: logs at WARN (the SDK logs
 * every worker state change and the whole workflow bundle at INFO; the service's own INFO is about
 * requests), and its metrics, with the service's own series, on a Prometheus endpoint
 * (WORKER_METRICS_ADDRESS; undefined: none). A runtime installed before (tests) is kept; an
 * endpoint that cannot be served (the address taken) stops the start, naming the variable, rather
 * than leave the worker without metrics and the start-up lines pointing at another process's.
 */
function installTemporalRuntime(metricsAddress: string | undefined): void {
  try {
    Runtime.install({
      logger: new SdkLogger('WARN'),
      ...(metricsAddress ? { telemetryOptions: { metrics: { prometheus: { bindAddress: metricsAddress } } } } : {}),
    });
  } catch (error) {
    if (error instanceof IllegalStateError) return; // already installed in this process
    throw new Error(`WORKER_METRICS_ADDRESS ${metricsAddress}: the worker's metrics endpoint could not start (${(error as Error).message}); free the address, give another, or "off"`);
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
 * Every activity runs inside `withoutDatabaseValues`; with tracing on, inside a span that continues
 * its workflow's trace too (the span first, outermost, so it records the failure as it leaves).
 */
function activityInterceptors(): NonNullable<NonNullable<WorkerOptions['interceptors']>['activity']> {
  const databaseValuesOut = () => ({ inbound: withoutDatabaseValues });
  const tracing = activeTracing();
  if (!tracing.enabled) return [databaseValuesOut];
  const { OpenTelemetryActivityInboundInterceptor, OpenTelemetryActivityOutboundInterceptor } = tracing.temporalInterceptors;
  const traced: ActivityInterceptorsFactory = (ctx) => ({ inbound: new OpenTelemetryActivityInboundInterceptor(ctx), outbound: new OpenTelemetryActivityOutboundInterceptor(ctx) });
  return [traced, databaseValuesOut];
}

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
  if (!tracing.enabled) return { ...workflows, interceptors: { activity: activityInterceptors() } };
  return {
    ...workflows,
    interceptors: {
      activity: activityInterceptors(),
      ...(source ? {} : { workflowModules: WORKFLOW_INTERCEPTOR_MODULES }),
    },
    sinks: { exporter: tracing.temporalInterceptors.makeWorkflowExporter(tracing.spanProcessor, tracing.resource) },
  };
}

/**
 * Activity slots of the outbound task queue: attempts that wait on slow endpoints (up to 60 per
 * endpoint, src/events/endpoint-slots) cost a promise each, not a thread.
 */
const OUTBOUND_ACTIVITY_SLOTS = 400;

/** The two workers of a worker process, run and stopped together. */
export interface ServiceWorker {
  run(): Promise<void>;
  shutdown(): void;
  getState(): ReturnType<Worker['getState']>;
}

function together(main: Worker, outbound: Worker, atStart: () => Promise<void>): ServiceWorker {
  return {
    async run() {
      // One stopping (failed or shut down) stops the other.
      await Promise.all([main.run().finally(() => stop(outbound)), outbound.run().finally(() => stop(main)), atStart()]);
    },
    shutdown() {
      stop(main);
      stop(outbound);
    },
    getState: () => main.getState(),
  };
}

function stop(worker: Worker): void {
  if (worker.getState() === 'RUNNING') worker.shutdown();
}

/**
 * Brings the schedules saved under another RECONCILE_INTERVAL to the configured one as a worker
 * starts; failing leaves them as they were (saving an integration's settings moves its schedule).
 * Logged at WARN, the SDK logger's level: a moved schedule is a configuration change taking effect.
 */
async function alignReconcileSchedules(orm: ActivityDeps['orm'], schedules: ReconcileSchedules): Promise<void> {
  const logger = Runtime.instance().logger;
  try {
    const enabled = await enabledReconciliations(orm.em.fork());
    const moved = await schedules.alignIntervals(enabled.map((row) => ({ orgId: row.organisation_id, platform: row.platform })));
    if (moved > 0) logger.warn(`moved ${moved} reconciliation schedule(s) to the configured RECONCILE_INTERVAL`, { moved });
  } catch (error) {
    logger.warn(`reconciliation schedules not checked against RECONCILE_INTERVAL: ${(error as Error).message}`);
  }
}

/**
 * The worker role: every workflow and activity of the service on its task queue, and the outbound
 * webhook attempts on a queue of their own (outboundTaskQueue), so a slow integrator's endpoint
 * never takes the activity slots fulfilment needs.
 */
export async function createWorker(setup: WorkerSetup): Promise<{ worker: ServiceWorker; connection: NativeConnection }> {
  installTemporalRuntime(setup.metricsAddress);
  const connection = await NativeConnection.connect({ address: setup.address });
  const outbound = await Worker.create({
    connection,
    namespace: setup.namespace,
    taskQueue: outboundTaskQueue(setup.taskQueue),
    activities: createOutboundActivities({ ...setup.deps, keyRing: setup.keyRing }),
    maxConcurrentActivityTaskExecutions: OUTBOUND_ACTIVITY_SLOTS,
    shutdownGraceTime: setup.shutdownGraceTime ?? '30s',
    // Its runs started after payload encryption: a plain input is never one of ours.
    dataConverter: encryptedPayloads(setup.keyRing, { acceptPlaintext: false }),
    interceptors: { activity: activityInterceptors() },
  });
  // Reconciliation pauses its schedule when a platform refuses the credentials: through the worker's
  // own connection.
  const schedules = new ReconcileSchedules(serviceClient(connection, setup.namespace, setup.keyRing), { taskQueue: setup.taskQueue, intervalMs: setup.deps.config.reconcile.intervalMs });
  const main = await Worker.create({
    connection,
    namespace: setup.namespace,
    taskQueue: setup.taskQueue,
    activities: { ...createActivities(setup.deps), ...createReconcileActivities({ ...setup.deps, keyRing: setup.keyRing, schedules }) },
    ...workflowAndTracingOptions(setup.workflowBundle),
    shutdownGraceTime: setup.shutdownGraceTime ?? '30s',
    maxCachedWorkflows: setup.maxCachedWorkflows,
    dataConverter: encryptedPayloads(setup.keyRing, { acceptPlaintext: setup.acceptPlaintextPayloads }),
  });
  return { worker: together(main, outbound, () => alignReconcileSchedules(setup.deps.orm, schedules)), connection };
}
