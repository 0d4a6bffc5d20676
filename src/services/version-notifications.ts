/**
 * "Notify buyers" of a new version (decisions §12): who gets the email (every purchase of the
 * product that is neither revoked nor a test, whose customer did not turn update notices off), the
 * one notification per version and its progress, and the one-click unsubscribe.
 */
import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { isoUtc } from '../db/legacy-sql';
import { ConflictError, NotFoundError } from '../domain/errors';
import { isUuid } from '../domain/uuid';
import { versionNotificationWorkflowId } from '../domain/version-notification';
import { enqueueDispatches } from './workflow-outbox';
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

/** The purchases a notice goes to: `p` a purchase, `c` its customer. */
const ELIGIBLE = 'p.revoked_at is null and not p.test and c.update_notices_off_at is null';

/** The business key of one notice in the sent-email log: once per version and purchase. */
export const noticeKeyPrefix = (versionId: string) => `update:${versionId}:`;

/** How many buyers "notify buyers" would email now (the dashboard button says it). */
export async function eligibleBuyers(em: EntityManager, orgId: string, productId: string): Promise<number> {
  return noticeEligibleCount(em, orgId, productId);
}

const PROGRESS_SELECT = `select n.id as "notificationId", n.product_id as "productId", n.version_id as "versionId", v.version,
    case when n.completed_at is null then 'running' else 'done' end as status, n.total,
    (select count(*) from sent_email e where e.kind = 'update' and e.status = 'sent' and e.business_key like n.key_prefix)::int as sent,
    (select count(*) from sent_email e where e.kind = 'update' and e.status = 'failed' and e.business_key like n.key_prefix)::int as failed,
    ${isoUtc('n.created_at')} as "startedAt", ${isoUtc('n.completed_at')} as "completedAt", n.workflow_id as "workflowId"
  from (select *, 'update:' || version_id || ':%' as key_prefix from version_notification) n
  join product_version v on v.id = n.version_id`;

function withLeft(row: Omit<NotificationProgress, 'left'>): NotificationProgress {
  return { ...row, left: row.status === 'done' ? 0 : Math.max(0, row.total - row.sent - row.failed) };
}

/** Every notification of a product, newest first, with its progress (sent, failed, left). */
export async function productNotifications(em: EntityManager, orgId: string, productId: string): Promise<NotificationProgress[]> {
  const rows = await em.execute<Array<Omit<NotificationProgress, 'left'>>>(
    `${PROGRESS_SELECT} where n.organisation_id = ? and n.product_id = ? order by n.created_at desc`, [orgId, productId],
  );
  return rows.map(withLeft);
}

async function progressOf(em: EntityManager, notificationId: string): Promise<NotificationProgress> {
  const [row] = await em.execute<Array<Omit<NotificationProgress, 'left'>>>(`${PROGRESS_SELECT} where n.id = ?`, [notificationId]);
  return withLeft(row);
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
    const [version] = await tx.execute<Array<{ active: boolean; ready: boolean }>>(
      `select p.active_version_id = v.id as active, v.status = 'ready' as ready
       from product_version v join product p on p.id = v.product_id
       where v.id = ? and p.id = ? and p.organisation_id = ? for update of p`,
      [versionId, productId, orgId],
    );
    if (!version) throw new NotFoundError('version not found');
    const workflowId = versionNotificationWorkflowId(versionId);
    const inserted = await tx.execute<Array<{ id: string }>>(
      `insert into version_notification (id, organisation_id, product_id, version_id, total, started_by, workflow_id, created_at)
       values (gen_random_uuid(), ?, ?, ?, 0, ?, ?, ?) on conflict (version_id) do nothing returning id`,
      [orgId, productId, versionId, startedBy, workflowId, now],
    );
    if (inserted.length === 0) {
      const [existing] = await tx.execute<Array<{ id: string }>>('select id from version_notification where version_id = ?', [versionId]);
      return { id: existing.id, created: false };
    }
    if (!version.active || !version.ready) {
      throw new ConflictError('only the product\'s active version can be announced: make this version active first');
    }
    await tx.execute('update version_notification set total = ? where id = ?', [await eligibleBuyers(tx, orgId, productId), inserted[0].id]);
    await enqueueDispatches(tx, [{
      kind: 'notify-buyers', workflowId, orgId, payload: { notificationId: inserted[0].id, after: null },
    }]);
    return { id: inserted[0].id, created: true };
  });
  return { ...(await progressOf(em, result.id)), created: result.created };
}

/** The next purchases to notify, by id after `after`: still eligible now (a revoke or unsubscribe since counts). */
export async function nextNoticeRecipients(em: EntityManager, notificationId: string, after: string | null, limit: number): Promise<string[]> {
  const rows = await em.execute<Array<{ id: string }>>(
    `select p.id from version_notification n
     join purchase p on p.product_id = n.product_id and p.organisation_id = n.organisation_id
     join customer c on c.id = p.customer_id
     where n.id = ? and ${ELIGIBLE} and (?::uuid is null or p.id > ?::uuid)
     order by p.id limit ?`,
    [notificationId, after, after, limit],
  );
  return rows.map((r) => r.id);
}

/** Notices of a batch still `sending` after its retries ran out: logged failed, so progress adds up. */
export async function giveUpNotices(em: EntityManager, notificationId: string, purchaseIds: string[], reason: string): Promise<void> {
  const [notification] = await em.execute<Array<{ version_id: string }>>('select version_id from version_notification where id = ?', [notificationId]);
  if (!notification) return;
  const keys = purchaseIds.map((purchaseId) => `${noticeKeyPrefix(notification.version_id)}${purchaseId}`);
  await em.execute(
    `update sent_email set status = 'failed', error = ?
     where kind = 'update' and status = 'sending' and business_key in (select jsonb_array_elements_text(?::jsonb))`,
    [reason.slice(0, 1000), JSON.stringify(keys)],
  );
}

export async function finishNotification(em: EntityManager, notificationId: string, now: Date): Promise<void> {
  await em.execute('update version_notification set completed_at = coalesce(completed_at, ?) where id = ?', [now, notificationId]);
}

/** What one notice needs, read just before it is sent; null when the purchase is no longer eligible. */
export interface NoticeContext {
  orgId: string;
  orgName: string;
  versionId: string;
  versionLabel: string;
  productName: string;
  customerId: string;
  customerName: string;
  email: string;
}

export async function noticeContext(em: EntityManager, notificationId: string, purchaseId: string): Promise<NoticeContext | null> {
  const [row] = await em.execute<NoticeContext[]>(
    `select n.organisation_id as "orgId", o.name as "orgName", n.version_id as "versionId", v.version as "versionLabel",
       pr.name as "productName", c.id as "customerId", c.name as "customerName", c.email
     from version_notification n
     join organisation o on o.id = n.organisation_id
     join product_version v on v.id = n.version_id
     join product pr on pr.id = n.product_id
     join purchase p on p.id = ? and p.product_id = n.product_id
     join customer c on c.id = p.customer_id
     where n.id = ? and ${ELIGIBLE}`,
    [purchaseId, notificationId],
  );
  return row ?? null;
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
