import { Client, Connection, type ConnectionLike, isGrpcServiceError, ServiceError, WorkflowExecutionAlreadyStartedError, type WorkflowStartOptions } from '@temporalio/client';
import type { FulfilmentInput } from '../domain/fulfilment';
import { NamespaceNotFoundError, WorkflowNotFoundError, type Priority, type SearchAttributePair, type SignalDefinition } from '@temporalio/common';
import type { Config } from '../config';
import type { KeyRing } from '../security/key-ring';
import { activeTracing } from '../telemetry/tracing';
import { encryptedPayloads } from './encryption-codec';
import { isBulkDispatch, type DispatchFailureKind, type DispatchKind, type NewDispatch } from '../domain/dispatch';
import { attachDeliveryItem, licenseKeyIssued, redeliverOutboundEvent, transferCompleted } from '../../workflows/messages';
import type {
  buyerReminder, deliverOutboundEvent, freshLinks, fulfilOrderLine, orderAlert, purchaseRevocation, versionNotification,
} from '../../workflows';
import { OrderIdSearchAttribute, OrgIdSearchAttribute, PlatformSearchAttribute } from './search-attributes';
import { ReconcileSchedules } from './reconcile-schedules';


/**
 * How long one start or signal may take before the dispatcher gives its row back to the outbox
 * (the client's own retries may overrun it by about half). Nobody waits on it but the dispatcher.
 */
const DISPATCH_DEADLINE_MS = 5_000;

/**
 * How long a readiness ping waits for the engine. Without a deadline the SDK's retries of an
 * unreachable engine ran about 20 s after /readyz had answered; a stopping process closed the
 * connection under them, and the next retry threw from its timer ("Channel has been shut down").
 */
export const PING_DEADLINE_MS = 3_000;

/** gRPC status codes (grpc/doc/statuscodes.md); @grpc/grpc-js is not a dependency of ours. */
const GRPC_CANCELLED = 1;
const GRPC_INVALID_ARGUMENT = 3;
const GRPC_DEADLINE_EXCEEDED = 4;
const GRPC_UNAVAILABLE = 14;
const UNREACHABLE_CODES: ReadonlySet<number> = new Set([GRPC_UNAVAILABLE, GRPC_DEADLINE_EXCEEDED, GRPC_CANCELLED]);

/** The gRPC error under a client error, if the engine answered. */
function grpcCauseOf(error: unknown) {
  return isGrpcServiceError(error) ? error : error instanceof ServiceError && isGrpcServiceError(error.cause) ? error.cause : undefined;
}

/**
 * A failure in words for operators and the item's reason: the client's message and the engine's own
 * (e.g. "WorkflowId length exceeds limit."): the gRPC details through @grpc/grpc-js, the message
 * itself through a worker's NativeConnection (which leaves the details empty).
 */
export function dispatchFailureText(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const grpc = grpcCauseOf(error);
  const engineSays = grpc?.details || grpc?.message;
  return engineSays && !message.includes(engineSays) ? `${message}: ${engineSays}` : message;
}

export function dispatchFailureKind(error: unknown): DispatchFailureKind {
  if (error instanceof NamespaceNotFoundError) return 'permanent';
  // The client's word for NOT_FOUND on a signal: the line's run closed between the start and the signal.
  if (error instanceof WorkflowNotFoundError) return 'refused';
  const grpc = grpcCauseOf(error);
  if (grpc === undefined) return error instanceof ServiceError ? 'refused' : 'unreachable';
  if (grpc.code === GRPC_INVALID_ARGUMENT) return 'permanent';
  return UNREACHABLE_CODES.has(grpc.code) ? 'unreachable' : 'refused';
}

/** A run there is one of per workflow id, ever (a reminder, a version's notices). */
const ONE_RUN_EVER = { workflowIdConflictPolicy: 'USE_EXISTING', workflowIdReusePolicy: 'REJECT_DUPLICATE' } as const;

/**
 * Task Queue Priority (1 first, 5 last; the engine's default is 3): what a person waits for on a page
 * (a buyer's fresh link) goes before sales, and sales before bulk work (an integrator's event, version
 * notices, a reminder's timer and its end: nobody waits on these).
 */
function priorityKey(kind: DispatchKind): number {
  if (kind === 'fresh-links') return 2;
  return isBulkDispatch(kind) ? 4 : 3;
}

/**
 * A run's priority and fairness key: the organisation, so that within a priority the engine hands
 * out each organisation's tasks in turn (Task Queue Fairness; activities inherit it from their run)
 * and one organisation's burst fills only its own share of the task queue. Rows of no organisation
 * (a /my request) share one key.
 */
export function runPriority(kind: DispatchKind, orgId: string | null): Priority {
  return { priorityKey: priorityKey(kind), fairnessKey: orgId ?? 'no-organisation' };
}

/** The settings the client applies to every run it starts (TEMPORAL_TASK_QUEUE, EMAIL_RETRY_WINDOW, OUTBOUND_RETRY_SCHEDULE). */
export type WorkflowStartPolicy = Pick<Config, 'temporal' | 'emailRetryWindowMs' | 'outbound' | 'reconcile'>;

/**
 * A client whose connection is made on first use: an API process starts, and accepts deliveries
 * into the outbox, while Temporal is out of reach (decisions §4, amended).
 */
export function connectTemporal(address: string, namespace: string, keyRing: KeyRing): { connection: Connection; client: Client } {
  const connection = Connection.lazy({ address });
  return { connection, client: serviceClient(connection, namespace, keyRing) };
}

/** The service's client over a connection it does not own (a worker's, whose role closes it). */
export function serviceClient(connection: ConnectionLike, namespace: string, keyRing: KeyRing): Client {
  const tracing = activeTracing();
  const interceptors = tracing.enabled ? { workflow: [new tracing.temporalInterceptors.OpenTelemetryWorkflowClientInterceptor()] } : undefined;
  // A plain payload the client reads back (a result, a history) starts nothing: only workers refuse them.
  const dataConverter = encryptedPayloads(keyRing, { acceptPlaintext: true });
  return new Client({ connection, namespace, dataConverter, interceptors });
}

/**
 * Starts (or joins) the workflow run of each outbox row, whatever its kind: fulfilment, alerts, fresh
 * links, revocations, version notices, outbound events, buyer reminders. The only place that knows start options,
 * the email retry window and what an unreachable engine means to a caller. Fulfilment runs are keyed by organisation, source, order id and product
 * (`src/domain/ids`); a run already open for that key is joined, a closed one does not block a new
 * run (the database decides whether it is a duplicate). Activity timeouts and retries are the
 * presets of `src/domain/activity-policy`.
 */
export class WorkflowStarter {
  private readonly taskQueue: string;
  private readonly emailRetryWindowMs: number;
  private readonly retryScheduleMs: number[];
  /** The reconciliation schedules (decisions §15), on the same task queue. */
  readonly reconcileSchedules: ReconcileSchedules;

  constructor(
    private readonly client: Client,
    policy: WorkflowStartPolicy,
  ) {
    this.taskQueue = policy.temporal.taskQueue;
    this.emailRetryWindowMs = policy.emailRetryWindowMs;
    this.retryScheduleMs = policy.outbound.retryScheduleMs;
    this.reconcileSchedules = new ReconcileSchedules(client, { taskQueue: this.taskQueue, intervalMs: policy.reconcile.intervalMs });
  }

  private searchAttributes(orgId: string, source: string, orderId: string): SearchAttributePair[] {
    return [
      { key: OrgIdSearchAttribute, value: orgId },
      { key: PlatformSearchAttribute, value: source },
      { key: OrderIdSearchAttribute, value: orderId },
    ];
  }

  /** Starts a fulfilment run; false when the engine refuses it as already started (by `policies`). */
  private async startFulfilment(
    deadline: number,
    workflowId: string,
    input: FulfilmentInput,
    orderKey: string,
    policies: Pick<WorkflowStartOptions, 'workflowIdConflictPolicy' | 'workflowIdReusePolicy' | 'priority'>,
  ): Promise<boolean> {
    try {
      await this.client.withDeadline(deadline, () => this.client.workflow.start<typeof fulfilOrderLine>('fulfilOrderLine', {
        workflowId,
        taskQueue: this.taskQueue,
        args: [{ ...input, receiptInTask: true, firstRoundInTask: true }],
        ...policies,
        typedSearchAttributes: this.searchAttributes(input.orgId, input.source, orderKey),
      }));
      return true;
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
      return false;
    }
  }

  /** Runs `start` of a run there is one of ever: one open or done already is left as it is. */
  private async startOnce(start: () => Promise<unknown>): Promise<void> {
    try {
      await start();
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
  }

  /** Signals the run of `workflowId` if it is open; a run that ended, or has not started, needs nothing. */
  private async signalIfOpen(deadline: number, workflowId: string, signal: SignalDefinition): Promise<void> {
    try {
      await this.client.withDeadline(deadline, () => this.client.workflow.getHandle(workflowId).signal(signal));
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError)) throw error;
    }
  }

  /**
   * Carries out one outbox row: starts or joins the run its workflow id names. Safe to repeat: a
   * fulfilment run already open is joined (the item is attached once), an alert or fresh-links run
   * already open is used as it is, and a closed run's business keys live in PostgreSQL (a repeated
   * start of a finished item finds its outcome recorded and does nothing).
   */
  async dispatch(request: NewDispatch): Promise<void> {
    const deadline = Date.now() + DISPATCH_DEADLINE_MS;
    const { workflowId } = request;
    const priority = runPriority(request.kind, request.orgId);
    switch (request.kind) {
      case 'fulfil-line': {
        // Start (the run attaches the item it was started for), or, when a run of this line is
        // open, attach the item to it with a signal. A plain start costs the engine one event less
        // than signalWithStart, and joining is the rare case. A run that closes between the two
        // calls makes the signal fail: the row is retried, and its retry starts a new run.
        const input = { ...request.payload, emailRetryWindowMs: this.emailRetryWindowMs };
        const policies = { workflowIdConflictPolicy: 'FAIL', workflowIdReusePolicy: 'ALLOW_DUPLICATE', priority } as const;
        if (!(await this.startFulfilment(deadline, workflowId, input, input.externalOrderId, policies))) {
          await this.client.withDeadline(deadline, () => this.client.workflow.getHandle(workflowId).signal(attachDeliveryItem, { itemId: input.deliveryItemId }));
        }
        return;
      }
      case 'fulfil-sale': {
        // One run per sale, ever: a repeated dispatch finds it (open or closed) and starts nothing.
        const { orderKey, ...sale } = request.payload;
        const policies = { workflowIdConflictPolicy: 'USE_EXISTING', workflowIdReusePolicy: 'REJECT_DUPLICATE', priority } as const;
        await this.startFulfilment(deadline, workflowId, { ...sale, emailRetryWindowMs: this.emailRetryWindowMs }, orderKey, policies);
        return;
      }
      case 'order-alert': {
        const alert = request.payload;
        await this.client.withDeadline(deadline, () => this.client.workflow.start<typeof orderAlert>('orderAlert', {
          workflowId,
          taskQueue: this.taskQueue,
          priority,
          args: [alert],
          workflowIdConflictPolicy: 'USE_EXISTING',
          workflowIdReusePolicy: 'ALLOW_DUPLICATE',
          typedSearchAttributes: this.searchAttributes(alert.orgId, alert.platform, alert.externalOrderId),
        }));
        return;
      }
      case 'fresh-links':
        await this.client.withDeadline(deadline, () => this.client.workflow.start<typeof freshLinks>('freshLinks', {
          workflowId,
          taskQueue: this.taskQueue,
          priority,
          args: [{ ...request.payload, emailRetryWindowMs: this.emailRetryWindowMs }],
          workflowIdConflictPolicy: 'USE_EXISTING',
        }));
        return;
      case 'revoke': {
        // One run per event entry: a repeated dispatch finds it (open or closed) and its items decided.
        const revocation = request.payload;
        await this.client.withDeadline(deadline, () => this.client.workflow.start<typeof purchaseRevocation>('purchaseRevocation', {
          workflowId,
          taskQueue: this.taskQueue,
          priority,
          args: [revocation],
          workflowIdConflictPolicy: 'USE_EXISTING',
          workflowIdReusePolicy: 'ALLOW_DUPLICATE',
          typedSearchAttributes: this.searchAttributes(revocation.orgId, revocation.platform, revocation.orderRef),
        }));
        return;
      }
      case 'deliver-event': {
        // A first delivery is one run, ever: a repeated dispatch finds it open or ended and starts
        // nothing (a new run would send the event again). A redelivery signals with start: an open
        // run makes one more attempt at once (joined as it is, a run that had just delivered would
        // end without one), and after a closed run a new one starts.
        const { redelivery, ...target } = request.payload;
        const options = {
          workflowId, taskQueue: this.taskQueue, priority, args: [{ ...target, retryScheduleMs: this.retryScheduleMs }],
        } satisfies WorkflowStartOptions<typeof deliverOutboundEvent>;
        if (redelivery) {
          await this.client.withDeadline(deadline, () => this.client.workflow.signalWithStart<typeof deliverOutboundEvent, []>('deliverOutboundEvent', {
            ...options, workflowIdReusePolicy: 'ALLOW_DUPLICATE', signal: redeliverOutboundEvent, signalArgs: [],
          }));
        } else {
          await this.startOnce(() => this.client.withDeadline(deadline, () => this.client.workflow.start<typeof deliverOutboundEvent>('deliverOutboundEvent', {
            ...options, ...ONE_RUN_EVER,
          })));
        }
        return;
      }
      case 'license-issued':
        // The run waits for this signal; a run that has ended (or not yet started: it finds the
        // key itself when it records the purchase) needs nothing.
        await this.signalIfOpen(deadline, workflowId, licenseKeyIssued);
        return;
      case 'buyer-reminder':
        // One run per purchase, ever: a repeated dispatch (a receipt re-sent) finds it open or done and starts nothing.
        // Its wait is the engine's start delay: no workflow task until it is due (a timer would cost a task
        // and its events on every sale's path), and the engine keeps it through any restart.
        await this.startOnce(() => this.client.withDeadline(deadline, () => this.client.workflow.start<typeof buyerReminder>('buyerReminder', {
          ...ONE_RUN_EVER, workflowId, taskQueue: this.taskQueue, priority, args: [{ ...request.payload, emailRetryWindowMs: this.emailRetryWindowMs }],
          startDelay: Math.max(0, Date.parse(request.payload.dueAt) - Date.now()),
        })));
        return;
      case 'transfer-completed':
        // Signal-with-start: a plain signal would wait out the run's start delay, this one ends the wait
        // now. A run that has not started yet starts told (the later start finds it done); one that
        // ended is left alone.
        await this.startOnce(() => this.client.withDeadline(deadline, () => this.client.workflow.signalWithStart<typeof buyerReminder, []>('buyerReminder', {
          workflowIdReusePolicy: ONE_RUN_EVER.workflowIdReusePolicy, workflowId, taskQueue: this.taskQueue, priority,
          args: [{ ...request.payload, dueAt: new Date().toISOString(), emailRetryWindowMs: this.emailRetryWindowMs }],
          signal: transferCompleted, signalArgs: [],
        })));
        return;
      case 'notify-buyers':
        // One run (chain) per version, ever: a repeated dispatch finds it open or done and starts nothing.
        await this.startOnce(() => this.client.withDeadline(deadline, () => this.client.workflow.start<typeof versionNotification>('versionNotification', {
          ...ONE_RUN_EVER, workflowId, taskQueue: this.taskQueue, priority, args: [request.payload],
        })));
        return;
    }
  }

  /** For /readyz: whether the engine answers, within PING_DEADLINE_MS (and one pending retry's backoff at most). */
  async ping(): Promise<void> {
    await this.client.withDeadline(Date.now() + PING_DEADLINE_MS, () => this.client.connection.workflowService.getSystemInfo({}));
  }
}
