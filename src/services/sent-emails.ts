import type { EntityManager } from '@mikro-orm/postgresql';
import { messageIdsSentFor } from '../deliveries/mail-ledger-store';

/**
 * Which of these Message-IDs the service sent on behalf of this organisation (its receipts, links
 * and staff alerts, as the sent-email log records them). The dev mailbox shows an organisation only
 * its own mail: another organisation's receipt carries working download links.
 */
export async function messageIdsOfOrganisation(em: EntityManager, orgId: string, messageIds: string[]): Promise<Set<string>> {
  if (messageIds.length === 0) return new Set();
  return new Set(await messageIdsSentFor(em, orgId, messageIds));
}
