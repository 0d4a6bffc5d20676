/**
 * A sale entered by API or dashboard (POST /api/purchases), recorded by its request: the customer,
 * the purchase, the link the answer shows and the start of its fulfilment run commit together. The
 * run comes from the outbox (decisions §4: accept = recorded), finds the purchase as its own and
 * sends the receipt; with the workflow engine out of reach the sale is still recorded and answered,
 * and the receipt goes when the engine is back.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { randomUUID } from 'node:crypto';
import { downloadLinkExpiry, downloadLinkUrl, type DownloadLinkSettings } from '../domain/download-links';
import { ConflictError, NotFoundError } from '../domain/errors';
import type { FulfilmentRequest } from '../domain/fulfilment';
import { fulfilSaleWorkflowId, saleOrderKey } from '../domain/ids';
import { mintDownloadToken } from '../security/secrets';
import type { IssuedLink } from '../services/download-links';
import { dispatchRows } from '../services/workflow-outbox';
import { recordSalePurchase, type RecordPurchaseRow } from './purchase-store';

export interface RecordedSale {
  purchaseId: string;
  customerId: string;
  link: IssuedLink;
}

/**
 * How often the sale's statement is tried when it finds the customer being created by another
 * request at the same moment (each try is a new statement, so it sees what that request committed).
 */
const TRIES = 3;

/**
 * Records the sale, its link and its run's start in one statement (one round trip, one commit);
 * 409 when its order is already recorded.
 */
export async function recordSale(em: EntityManager, input: FulfilmentRequest, links: DownloadLinkSettings, now: Date): Promise<RecordedSale> {
  const purchaseKey = randomUUID();
  // A sale without an order id of its own is known by its purchase (workflow id, OrderId attribute).
  const orderKey = saleOrderKey(input.externalOrderId, purchaseKey);
  const payload = { ...input, purchaseKey, orderKey };
  const [start] = dispatchRows([{ kind: 'fulfil-sale', workflowId: fulfilSaleWorkflowId(payload), orgId: input.orgId, payload }]);
  const { token, hash } = mintDownloadToken();
  const link = { tokenHash: hash, expiresAt: downloadLinkExpiry(now, links.ttlMs), now };

  let row: RecordPurchaseRow;
  for (let tried = 1; ; tried += 1) {
    row = await recordSalePurchase(em, { ...input, purchaseKey }, link, start);
    if (!row.product_found) throw new NotFoundError('product not found');
    if (!row.customer_id && 'id' in input.customer) throw new NotFoundError('customer not found');
    if (row.purchase_id || tried === TRIES) break;
  }
  if (!row.purchase_id || !row.purchase_customer_id) {
    throw new ConflictError('the customer is being recorded by another request at this moment: please try again');
  }
  if (row.purchase_id !== purchaseKey) throw new ConflictError('this order is already recorded');
  return { purchaseId: purchaseKey, customerId: row.purchase_customer_id, link: { url: downloadLinkUrl(links.siteUrl, token), expiresAt: link.expiresAt } };
}
