import type { KeyRing } from '../src/security/key-ring';
import type { ActivityDeps } from './deps';
import { deliveryActivities } from './deliveries';
import { emailActivities } from './emails';
import { freshLinkActivities } from './fresh-links';
import { fulfilmentActivities } from './fulfilment';
import { licenseActivities } from './licenses';
import { outboundEventActivities } from './outbound-events';
import { purchaseActivities } from './purchases';
import { reminderActivities } from './reminders';
import { reconcileActivities, type ReconcileActivityDeps } from './reconciliation';
import { revocationActivities } from './revocations';
import { versionNotificationActivities } from './version-notifications';

export type { ActivityDeps } from './deps';

/** Every activity of the service, built from its dependencies (no module-level singletons). */
export function createActivities(deps: ActivityDeps) {
  // Built once: the first round (fulfilFirstRound) is made of these same activities.
  const steps = { ...purchaseActivities(deps), ...emailActivities(deps), ...deliveryActivities(deps) };
  return {
    ...steps,
    ...fulfilmentActivities(steps),
    ...freshLinkActivities(deps),
    ...licenseActivities(deps),
    ...revocationActivities(deps),
    ...versionNotificationActivities(deps),
    ...reminderActivities(deps),
  };
}

/** The activity of the outbound task queue (src/domain/outbound-events' outboundTaskQueue): it signs, so it has the key ring. */
export function createOutboundActivities(deps: ActivityDeps & { keyRing: KeyRing }) {
  return outboundEventActivities(deps);
}

/** The activities of missed-webhook reconciliation (main task queue): they open sealed credentials and pause schedules. */
export function createReconcileActivities(deps: ReconcileActivityDeps) {
  return reconcileActivities(deps);
}

export type Activities = ReturnType<typeof createActivities> & ReturnType<typeof createOutboundActivities> & ReturnType<typeof createReconcileActivities>;
