import { staffEmails } from '../src/events/outbound-events';
import { pauseReconciliation, reconciliationOf, recordRunResult } from '../src/accounts/reconciliation-store';
import type { Platform } from '../src/domain/platforms';
import { readSince, type PageOutcome, type ReconcileResult } from '../src/domain/reconciliation';
import { reconcileRefusedMail } from '../src/mail/templates';
import type { KeyRing } from '../src/security/key-ring';
import { openCredentials } from '../src/services/reconciliation';
import { recordPulledOrders } from '../src/services/webhook-intake';
import type { ReconcileSchedules } from '../src/temporal/reconcile-schedules';
import type { NormalizedOrder } from '../src/webhooks/adapter';
import { orderListClientOf } from '../src/webhooks/order-lists';
import type { ActivityDeps } from './deps';
import { createSendOnce } from './send-once';

export type ReconcileActivityDeps = ActivityDeps & { keyRing: KeyRing; schedules: ReconcileSchedules };

type Integration = { orgId: string; platform: Platform };

/** The activities of `reconcileIntegration` (decisions §15): they open the sealed credentials, so they have the key ring. */
export function reconcileActivities({ orm, mailer, config, keyRing, schedules }: ReconcileActivityDeps) {
  const sendOnce = createSendOnce({ orm, mailer, config });

  return {
    /** Where a run reads from, or null when reconciliation is off or paused (a run the schedule had already started). */
    async beginReconcile({ orgId, platform }: Integration): Promise<{ since: string } | null> {
      const row = await reconciliationOf(orm.em.fork(), orgId, platform);
      if (!row?.enabled || row.paused_at !== null) return null;
      return { since: readSince(row.high_water_mark, new Date(), config.reconcile.lookbackMs) };
    },

    /**
     * Reads one page and records its paid orders through the webhook intake, and tells the latest
     * change time it read (the run raises the high-water mark to it only once every page is read).
     * A retry after a crash reads the same page again, and the business keys make its orders
     * `alreadyKnown`.
     */
    async reconcilePage({ orgId, platform, since, cursor }: Integration & { since: string; cursor: string | null }): Promise<PageOutcome> {
      const em = orm.em.fork();
      const row = await reconciliationOf(em, orgId, platform);
      const client = orderListClientOf(platform);
      if (!row?.enabled || !client) return { kind: 'stopped' };
      const page = await client.fetchPage({
        origin: row.api_base_url, credentials: openCredentials(keyRing, row), since, cursor, allowPrivate: config.outbound.allowPrivate,
      });
      if (page.kind === 'refused') return { ...page, savedAt: row.updated_at };
      if (page.kind !== 'page') return page;
      const orders = page.orders.flatMap((listed): NormalizedOrder[] => ('unreadable' in listed.order ? [] : [listed.order]));
      const recorded = await recordPulledOrders(orm, orgId, platform, orders, new Date());
      const changes = page.orders.map((o) => Date.parse(o.changedAt ?? '')).filter(Number.isFinite);
      const newestChange = changes.length > 0 ? new Date(Math.max(...changes)).toISOString() : null;
      const result: ReconcileResult = {
        pulled: page.orders.length,
        recovered: recorded.recovered,
        alreadyKnown: recorded.alreadyKnown,
        errors: page.orders.length - orders.length + recorded.unreadable,
      };
      return { kind: 'recorded', result, nextCursor: page.nextCursor, slowDownMs: page.slowDownMs, newestChange };
    },

    /**
     * The platform refused the credentials: the integration is paused (its schedule too) and owners
     * and admins get one email per pause, however many runs meet the refusal.
     */
    async pauseReconcile({ orgId, platform, reason, savedAt }: Integration & { reason: string; savedAt: string }): Promise<void> {
      const em = orm.em.fork();
      const paused = await pauseReconciliation(em, { orgId, platform, reason, now: new Date(), savedAt });
      if (!paused) return;
      await schedules.pause(orgId, platform, reason);
      const staff = await staffEmails(em, orgId);
      if (staff.emails.length === 0) return;
      await sendOnce(`reconcile-refused:${orgId}:${platform}:${paused.paused_at}`, 'alert', orgId, staff.emails, async () => reconcileRefusedMail({
        orgName: staff.orgName, platform, reason, settingsUrl: `${config.baseUrl}/settings/integrations`,
      }));
    },

    /**
     * Records the run's result and, when it read every page, raises the high-water mark to the latest
     * change it read (`newestChange`; null leaves the mark). A run that stopped early leaves the mark,
     * so the next one reads the pages it missed: lists read newest first (payments-c, cart-e) would
     * otherwise lose the older orders behind a page that failed.
     */
    async finishReconcile({ orgId, platform, result, newestChange }: Integration & { result: ReconcileResult; newestChange?: string | null }): Promise<void> {
      await recordRunResult(orm.em.fork(), orgId, platform, { at: new Date(), result, newestChange: newestChange ?? null });
    },
  };
}
