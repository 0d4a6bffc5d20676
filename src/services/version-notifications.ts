/**
 * "Notify buyers" of a new version (decisions §12): who gets the email (every purchase of the
 * product that is neither revoked nor a test, whose customer did not turn update notices off), the
 * one notification per version and its progress, and the one-click unsubscribe.
 */
import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import {
  insertNotification, lockAnnouncedVersion, notificationOfVersion, notificationProgress, noticeContextOf, noticeRecipientsAfter,
  notifiedVersion, productNotificationProgress, setNotificationTotal, type NoticeContextRow, type NotificationProgressRow,
} from '../catalogue/version-notification-store';
import { ConflictError, NotFoundError } from '../domain/errors';
import { isUuid } from '../domain/uuid';
import { versionNotificationWorkflowId } from '../domain/ids';
import { enqueueDispatches } from './workflow-outbox';
import { failSendingNotices } from '../deliveries/mail-ledger-store';
import { noticeEligibleCount } from '../purchases/purchase-store';
import { movePurchaseToNoticeVersion, noticeSubscriptionOf, turnNoticesOff } from '../purchases/customer-store';

export const NotificationProgressSchema = z.object({
  notificationId: z.uuid(),
  productId: z.uuid(),
  versionId: z.uuid(),
  version: z.string(),
  status: z.enum(['running', 'done']),
  total: z.number().int().describe('buyers to email, counted when notify was asked for'),
  sent: z.number().int(),
  failed: z.number().int().describe('refused by the mail server'),
  left: z.number().int(),
  startedAt: z.string(),
  completedAt: z.string().nullable(),
  workflowId: z.string(),
});
export type NotificationProgress = z.infer<typeof NotificationProgressSchema>;

/** The business key of one notice in the sent-email log: once per version and purchase. */
export const noticeKeyPrefix = (versionId: string) => `update:${versionId}:`;

/** How many buyers "notify buyers" would email now (the dashboard button says it). */
export async function eligibleBuyers(em: EntityManager, orgId: string, productId: string): Promise<number> {
  return noticeEligibleCount(em, orgId, productId);
}

function withLeft(row: NotificationProgressRow): NotificationProgress {
  return { ...row, left: row.status === 'done' ? 0 : Math.max(0, row.total - row.sent - row.failed) };
}

/** Every notification of a product, newest first, with its progress (sent, failed, left). */
export async function productNotifications(em: EntityManager, orgId: string, productId: string): Promise<NotificationProgress[]> {
  return (await productNotificationProgress(em, orgId, productId)).map(withLeft);
}

async function progressOf(em: EntityManager, notificationId: string): Promise<NotificationProgress> {
  return withLeft(await notificationProgress(em, notificationId));
}

/**
 * Starts the notification of a version (through the outbox, so it starts even while the engine is
 * away), once: asking again for the same version answers the one that exists and sends nothing new.
 * Only the product's active, ready version can be announced. `created` tells which happened.
 */
export async function notifyBuyers(
  em: EntityManager, orgId: string, productId: string, versionId: string, startedBy: string, now: Date,
): Promise<NotificationProgress & { created: boolean }> {
  if (!isUuid(productId) || !isUuid(versionId)) throw new NotFoundError('version not found');
  const result = await em.transactional(async (tx) => {
    const version = await lockAnnouncedVersion(tx, orgId, productId, versionId);
    if (!version) throw new NotFoundError('version not found');
    const workflowId = versionNotificationWorkflowId(versionId);
    const inserted = await insertNotification(tx, { orgId, productId, versionId, startedBy, workflowId, now });
    if (inserted === undefined) return { id: (await notificationOfVersion(tx, versionId))!, created: false };
    if (!version.active || !version.ready) {
      throw new ConflictError('only the product\'s active version can be announced: make this version active first');
    }
    await setNotificationTotal(tx, inserted, await eligibleBuyers(tx, orgId, productId));
    await enqueueDispatches(tx, [{
      kind: 'notify-buyers', workflowId, orgId, payload: { notificationId: inserted, after: null },
    }]);
    return { id: inserted, created: true };
  });
  return { ...(await progressOf(em, result.id)), created: result.created };
}

/** The next purchases to notify, by id after `after`: still eligible now (a revoke or unsubscribe since counts). */
export async function nextNoticeRecipients(em: EntityManager, notificationId: string, after: string | null, limit: number): Promise<string[]> {
  return noticeRecipientsAfter(em, notificationId, after, limit);
}

/** Notices of a batch still `sending` after its retries ran out: logged failed, so progress adds up. */
export async function giveUpNotices(em: EntityManager, notificationId: string, purchaseIds: string[], reason: string): Promise<void> {
  const versionId = await notifiedVersion(em, notificationId);
  if (versionId === undefined) return;
  const keys = purchaseIds.map((purchaseId) => `${noticeKeyPrefix(versionId)}${purchaseId}`);
  await failSendingNotices(em, keys, reason.slice(0, 1000));
}

export { finishNotification } from '../catalogue/version-notification-store';

/** What one notice needs, read just before it is sent; null when the purchase is no longer eligible. */
export type NoticeContext = NoticeContextRow;

export async function noticeContext(em: EntityManager, notificationId: string, purchaseId: string): Promise<NoticeContext | null> {
  return (await noticeContextOf(em, notificationId, purchaseId)) ?? null;
}

/**
 * The purchase now downloads the announced version (the notice's link is to it), and the
 * customer's unsubscribe token, made with their first notice. One statement.
 */
export async function prepareNotice(em: EntityManager, purchaseId: string, context: NoticeContext): Promise<string> {
  return movePurchaseToNoticeVersion(em, purchaseId, context.versionId, context.customerId, randomBytes(24).toString('base64url'));
}

/** The unsubscribe page's view of a token: whose notices, and whether they are off already. */
export async function noticeSubscription(em: EntityManager, token: string): Promise<{ orgName: string; off: boolean } | null> {
  if (!/^[A-Za-z0-9_-]{16,64}$/.test(token)) return null;
  const row = await noticeSubscriptionOf(em, token);
  return row ? { orgName: row.org_name, off: row.off } : null;
}

/** One click: no more update notices for this customer (of this organisation). Idempotent. */
export async function unsubscribeFromNotices(em: EntityManager, token: string, now: Date): Promise<{ orgName: string } | null> {
  const found = await noticeSubscription(em, token);
  if (!found) return null;
  await turnNoticesOff(em, token, now);
  return { orgName: found.orgName };
}
