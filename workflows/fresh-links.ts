import { log, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { DATABASE_LOOKUP, emailWithin } from '../src/domain/activity-policy';
import type { FreshLinksRequest } from '../src/domain/fresh-links';

const { findFreshLinkGroups } = proxyActivities<Activities>(DATABASE_LOOKUP);

/**
 * Fresh download links by email: one email per organisation, listing a new link for each purchase
 * there (decisions §6). The HTTP request only starts this run; whether any purchase exists is
 * decided here, so /my answers the same, in the same time, for every address.
 */
export async function freshLinks(request: FreshLinksRequest): Promise<{ emails: number }> {
  const { sendFreshLinks } = proxyActivities<Activities>(emailWithin(request.emailRetryWindowMs));
  const groups = await findFreshLinkGroups(request);
  let emails = 0;
  for (const group of groups) {
    try {
      await sendFreshLinks({ requestId: request.requestId, group });
      emails += 1;
    } catch (error) {
      // One organisation's refused email must not keep the others from going out.
      log.warn('fresh links email failed', { orgId: group.orgId, error: (error as Error).message });
    }
  }
  return { emails };
}
