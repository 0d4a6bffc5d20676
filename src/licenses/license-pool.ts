/**
 * A product's license-key pool (decisions §14): uploads and counts. An upload's keys and the
 * receipts it releases commit together: each purchase that waited gets its key in purchase order,
 * and its run is woken through the outbox, so a crash after the commit loses no wake-up.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { ValidationError } from '../domain/errors';
import { fulfilSaleWorkflowId, saleOrderKey } from '../domain/ids';
import { parsePoolUpload } from '../domain/license-keys';
import { enqueueDispatches } from '../services/workflow-outbox';
import { findProduct } from '../services/products';
import { addPoolKeys, licenseKeyCounts, waitingPurchase, type ReleasedPurchase } from './license-store';

/** The wake-up of a released purchase's fulfilment run (its workflow id is the run's business key). */
function wakeOf(released: ReleasedPurchase) {
  const payload = {
    orgId: released.organisation_id, source: released.source, productId: released.product_id, purchaseId: released.purchase_id,
    orderKey: saleOrderKey(released.external_order_id, released.purchase_id),
  };
  return { kind: 'license-issued' as const, workflowId: fulfilSaleWorkflowId(payload), orgId: released.organisation_id, payload };
}

/** POST /api/products/{id}/license-keys: adds the text's keys to the pool; the purchases waiting for one get theirs. */
export async function uploadPoolKeys(em: EntityManager, orgId: string, productId: string, text: string): Promise<{ added: number; duplicates: number }> {
  const { licenseSource } = await findProduct(em, orgId, productId);
  if (licenseSource !== 'pool') {
    throw new ValidationError('this product does not take uploaded keys: set its licenseKeys to {"source": "pool"} first');
  }
  const parsed = parsePoolUpload(text);
  if (!parsed.ok) throw new ValidationError(parsed.error);
  const { added } = await em.transactional(async (tx) => {
    const result = await addPoolKeys(tx, orgId, productId, parsed.keys);
    await enqueueDispatches(tx, result.released.map(wakeOf));
    return result;
  });
  return { added, duplicates: parsed.keys.length - added };
}

/** GET /api/products/{id}/license-keys: free keys in the pool, and keys issued to purchases. */
export async function poolCounts(em: EntityManager, orgId: string, productId: string): Promise<{ available: number; issued: number }> {
  await findProduct(em, orgId, productId);
  return licenseKeyCounts(em, productId);
}

/**
 * In a revocation's transaction: a purchase revoked while it waited for a key has its run woken, so
 * that the run ends (withdrawn, no receipt) instead of waiting for an upload that skips it.
 */
export async function wakeIfWaitingForKey(tx: EntityManager, purchaseId: string): Promise<void> {
  const waiting = await waitingPurchase(tx, purchaseId);
  if (waiting) await enqueueDispatches(tx, [wakeOf(waiting)]);
}
