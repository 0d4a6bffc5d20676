import type { EntityManager } from '@mikro-orm/postgresql';
import { isoUtc, sql, statement, type NoRows } from '../db/sql';
import { NOTICE_ELIGIBLE } from '../purchases/purchase-store';

/**
 * The SQL of "notify buyers" (decisions §12): the one notification per version and its progress.
 * Owns the table version_notification.
 */

/** A notification with its progress as counted in the sent-email log (without `left`, which is worked out from these). */
export interface NotificationProgressRow {
  notificationId: string;
  productId: string;
  versionId: string;
  version: string;
  status: 'running' | 'done';
  total: number;
  sent: number;
  failed: number;
  startedAt: string;
  completedAt: string | null;
  workflowId: string;
}

const progressColumns = {
  notificationId: true, productId: true, versionId: true, version: true, status: true, total: true, sent: true, failed: true,
  startedAt: true, completedAt: true, workflowId: true,
} as const;

const progressSelect = sql`select n.id as "notificationId", n.product_id as "productId", n.version_id as "versionId", v.version,
    case when n.completed_at is null then 'running' else 'done' end as status, n.total,
    (select count(*) from sent_email e where e.kind = 'update' and e.status = 'sent' and e.business_key like n.key_prefix)::int as sent,
    (select count(*) from sent_email e where e.kind = 'update' and e.status = 'failed' and e.business_key like n.key_prefix)::int as failed,
    ${isoUtc('n.created_at')} as "startedAt", ${isoUtc('n.completed_at')} as "completedAt", n.workflow_id as "workflowId"
  from (select *, 'update:' || version_id || ':%' as key_prefix from version_notification) n
  join product_version v on v.id = n.version_id`;

const productProgressRead = statement<NotificationProgressRow, { orgId: string; productId: string }>(
  progressColumns,
  (p) => sql`${progressSelect} where n.organisation_id = ${p.orgId} and n.product_id = ${p.productId} order by n.created_at desc`,
);

const progressRead = statement<NotificationProgressRow, { notificationId: string }>(
  progressColumns,
  (p) => sql`${progressSelect} where n.id = ${p.notificationId}`,
);

/** Every notification of a product, newest first, with its progress. */
export function productNotificationProgress(em: EntityManager, orgId: string, productId: string): Promise<NotificationProgressRow[]> {
  return productProgressRead.rows(em, { orgId, productId });
}

/** One notification with its progress. */
export async function notificationProgress(em: EntityManager, notificationId: string): Promise<NotificationProgressRow> {
  return (await progressRead.first(em, { notificationId }))!;
}

const announcedVersionRead = statement<{ active: boolean; ready: boolean }, { versionId: string; productId: string; orgId: string }>(
  { active: true, ready: true },
  (p) => sql`select p.active_version_id = v.id as active, v.status = 'ready' as ready
       from product_version v join product p on p.id = v.product_id
       where v.id = ${p.versionId} and p.id = ${p.productId} and p.organisation_id = ${p.orgId} for update of p`,
);

/**
 * Whether the version of the organisation's product is the product's active one and ready;
 * undefined when there is no such version. Locks the product row until the transaction ends.
 */
export function lockAnnouncedVersion(
  em: EntityManager, orgId: string, productId: string, versionId: string,
): Promise<{ active: boolean; ready: boolean } | undefined> {
  return announcedVersionRead.first(em, { versionId, productId, orgId });
}

const notificationInsert = statement<{ id: string }, {
  orgId: string; productId: string; versionId: string; startedBy: string; workflowId: string; now: Date;
}>(
  { id: true },
  (p) => sql`insert into version_notification (id, organisation_id, product_id, version_id, total, started_by, workflow_id, created_at)
       values (gen_random_uuid(), ${p.orgId}, ${p.productId}, ${p.versionId}, 0, ${p.startedBy}, ${p.workflowId}, ${p.now})
       on conflict (version_id) do nothing returning id`,
);

/** A new notification of the version (total 0); undefined when the version has one already. */
export async function insertNotification(
  em: EntityManager,
  notification: { orgId: string; productId: string; versionId: string; startedBy: string; workflowId: string; now: Date },
): Promise<string | undefined> {
  return (await notificationInsert.first(em, notification))?.id;
}

const versionNotificationRead = statement<{ id: string }, { versionId: string }>(
  { id: true },
  (p) => sql`select id from version_notification where version_id = ${p.versionId}`,
);

/** The id of the version's notification, if any. */
export async function notificationOfVersion(em: EntityManager, versionId: string): Promise<string | undefined> {
  return (await versionNotificationRead.first(em, { versionId }))?.id;
}

const totalUpdate = statement<NoRows, { total: number; notificationId: string }>(
  {},
  (p) => sql`update version_notification set total = ${p.total} where id = ${p.notificationId}`,
);

/** Records how many buyers the notification is to email. */
export async function setNotificationTotal(em: EntityManager, notificationId: string, total: number): Promise<void> {
  await totalUpdate.run(em, { total, notificationId });
}

const recipientsRead = statement<{ id: string }, { notificationId: string; after: string | null; limit: number }>(
  { id: true },
  (p) => sql`select p.id from version_notification n
     join product pr on pr.id = n.product_id and pr.active_version_id = n.version_id
     join purchase p on p.product_id = n.product_id and p.organisation_id = n.organisation_id
     join customer c on c.id = p.customer_id
     where n.id = ${p.notificationId} and ${NOTICE_ELIGIBLE} and (${p.after}::uuid is null or p.id > ${p.after}::uuid)
     order by p.id limit ${p.limit}`,
);

/**
 * The next purchases to notify, by id after `after`: still eligible now (a revoke or unsubscribe since
 * counts), and none once the version is no longer the product's active one (a newer one, or one
 * pulled back to: its buyers are not moved to this version).
 */
export async function noticeRecipientsAfter(em: EntityManager, notificationId: string, after: string | null, limit: number): Promise<string[]> {
  return (await recipientsRead.rows(em, { notificationId, after, limit })).map((row) => row.id);
}

const notifiedVersionRead = statement<{ version_id: string }, { notificationId: string }>(
  { version_id: true },
  (p) => sql`select version_id from version_notification where id = ${p.notificationId}`,
);

/** The version a notification announces, if the notification exists. */
export async function notifiedVersion(em: EntityManager, notificationId: string): Promise<string | undefined> {
  return (await notifiedVersionRead.first(em, { notificationId }))?.version_id;
}

const notificationFinish = statement<NoRows, { now: Date; notificationId: string }>(
  {},
  (p) => sql`update version_notification set completed_at = coalesce(completed_at, ${p.now}) where id = ${p.notificationId}`,
);

/** Marks the notification done (the first time only). */
export async function finishNotification(em: EntityManager, notificationId: string, now: Date): Promise<void> {
  await notificationFinish.run(em, { now, notificationId });
}

/** What one notice needs, read just before it is sent. */
export interface NoticeContextRow {
  orgId: string;
  orgName: string;
  versionId: string;
  versionLabel: string;
  productName: string;
  customerId: string;
  customerName: string;
  email: string;
}

const noticeContextRead = statement<NoticeContextRow, { purchaseId: string; notificationId: string }>(
  { orgId: true, orgName: true, versionId: true, versionLabel: true, productName: true, customerId: true, customerName: true, email: true },
  (p) => sql`select n.organisation_id as "orgId", o.name as "orgName", n.version_id as "versionId", v.version as "versionLabel",
       pr.name as "productName", c.id as "customerId", c.name as "customerName", c.email
     from version_notification n
     join organisation o on o.id = n.organisation_id
     join product_version v on v.id = n.version_id
     join product pr on pr.id = n.product_id and pr.active_version_id = n.version_id
     join purchase p on p.id = ${p.purchaseId} and p.product_id = n.product_id
     join customer c on c.id = p.customer_id
     where n.id = ${p.notificationId} and ${NOTICE_ELIGIBLE}`,
);

/**
 * The notice of the notification to the purchase; undefined when the purchase is no longer eligible
 * or the version is no longer the product's active one.
 */
export function noticeContextOf(em: EntityManager, notificationId: string, purchaseId: string): Promise<NoticeContextRow | undefined> {
  return noticeContextRead.first(em, { purchaseId, notificationId });
}
