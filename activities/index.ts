import type { ActivityDeps } from './deps';
import { deliveryActivities } from './deliveries';
import { emailActivities } from './emails';
import { freshLinkActivities } from './fresh-links';
import { purchaseActivities } from './purchases';
import { revocationActivities } from './revocations';
import { versionNotificationActivities } from './version-notifications';

export type { ActivityDeps } from './deps';

/** Every activity of the service, built from its dependencies (no module-level singletons). */
export function createActivities(deps: ActivityDeps) {
  return {
    ...purchaseActivities(deps),
    ...emailActivities(deps),
    ...deliveryActivities(deps),
    ...freshLinkActivities(deps),
    ...revocationActivities(deps),
    ...versionNotificationActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
