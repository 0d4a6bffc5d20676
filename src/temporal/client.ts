import { randomUUID } from 'node:crypto';
import {
  Client,
  Connection,
  WithStartWorkflowOperation,
  type WorkflowHandle,
} from '@temporalio/client';
import type { SearchAttributePair } from '@temporalio/common';
import { alertWorkflowId, fulfilmentWorkflowId } from '../domain/ids';
import type { FulfilmentInput, OrderAlertRequest, RecordedPurchase } from '../domain/fulfilment';
import { freshLinksWorkflowId, type FreshLinksRequest } from '../domain/fresh-links';
import { attachDeliveryItem, purchaseRecorded } from '../../workflows/messages';
import type { freshLinks, orderAlert, orderLineFulfilment } from '../../workflows';
import { OrderIdSearchAttribute, OrgIdSearchAttribute, PlatformSearchAttribute } from './search-attributes';


/**
 * How long the webhook front door lets Temporal take to start or join a run (the client's retries
 * may overrun it by about half). Past it the delivery is answered 503, so that the platform
 * retries, inside the platforms' own timeouts (5 s for the shortest).
 */
const START_DEADLINE_MS = 2_500;

export async function connectTemporal(address: string, namespace: string): Promise<{ connection: Connection; client: Client }> {
  const connection = await Connection.connect({ address });
  return { connection, client: new Client({ connection, namespace }) };
}

/**
 * The only place that knows workflow ids and start options. Workflows are keyed by organisation,
 * source, order id and product; a run already open for that key is joined, a closed one does not
 * block a new run (the database decides whether it is a duplicate).
 */
export class FulfilmentClient {
  constructor(
    private readonly client: Client,
    private readonly taskQueue: string,
  ) {}

  private searchAttributes(orgId: string, source: string, orderId: string): SearchAttributePair[] {
    return [
      { key: OrgIdSearchAttribute, value: orgId },
      { key: PlatformSearchAttribute, value: source },
      { key: OrderIdSearchAttribute, value: orderId },
    ];
  }

  /** Starts or joins the line's run and attaches a delivery item to it; returns the workflow id. */
  async fulfilLine(input: FulfilmentInput & { externalOrderId: string }, itemId: string): Promise<string> {
    const workflowId = fulfilmentWorkflowId(input.orgId, input.source, input.externalOrderId, input.productId);
    await this.client.withDeadline(Date.now() + START_DEADLINE_MS, () => this.client.workflow.signalWithStart<typeof orderLineFulfilment, [{ itemId: string }]>('orderLineFulfilment', {
      workflowId,
      taskQueue: this.taskQueue,
      args: [input],
      signal: attachDeliveryItem,
      signalArgs: [{ itemId }],
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      typedSearchAttributes: this.searchAttributes(input.orgId, input.source, input.externalOrderId),
    }));
    return workflowId;
  }

  /**
   * A sale entered by API or dashboard: starts (or joins) its run and waits only until the
   * purchase is recorded; the receipt goes on in the background.
   */
  async recordSale(input: FulfilmentInput): Promise<RecordedPurchase & { workflowId: string }> {
    const orderKey = input.externalOrderId ?? `sale-${randomUUID()}`;
    const workflowId = fulfilmentWorkflowId(input.orgId, input.source, orderKey, input.productId);
    const startWorkflowOperation = new WithStartWorkflowOperation<typeof orderLineFulfilment>('orderLineFulfilment', {
      workflowId,
      taskQueue: this.taskQueue,
      args: [input],
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      typedSearchAttributes: this.searchAttributes(input.orgId, input.source, orderKey),
    });
    const recorded = await this.client.workflow.executeUpdateWithStart(purchaseRecorded, { startWorkflowOperation });
    return { ...recorded, workflowId };
  }

  /** The alert of an entry recorded as Error at once; one run per order. */
  async alert(request: OrderAlertRequest): Promise<string> {
    const workflowId = alertWorkflowId(request.orgId, request.platform, request.externalOrderId);
    await this.client.withDeadline(Date.now() + START_DEADLINE_MS, () => this.client.workflow.start<typeof orderAlert>('orderAlert', {
      workflowId,
      taskQueue: this.taskQueue,
      args: [request],
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      typedSearchAttributes: this.searchAttributes(request.orgId, request.platform, request.externalOrderId),
    }));
    return workflowId;
  }

  /**
   * Fresh download links by email (/my, or an expired link's button); the request path only starts
   * it, within the same deadline as the front door, so a customer never waits on an unreachable Temporal.
   */
  async freshLinks(request: FreshLinksRequest): Promise<string> {
    const workflowId = freshLinksWorkflowId(request.requestId);
    await this.client.withDeadline(Date.now() + START_DEADLINE_MS, () => this.client.workflow.start<typeof freshLinks>('freshLinks', {
      workflowId,
      taskQueue: this.taskQueue,
      args: [request],
      workflowIdConflictPolicy: 'USE_EXISTING',
    }));
    return workflowId;
  }

  handle(workflowId: string): WorkflowHandle {
    return this.client.workflow.getHandle(workflowId);
  }

  /** For /readyz: the frontend answers. */
  async ping(): Promise<void> {
    await this.client.connection.workflowService.getSystemInfo({});
  }
}
