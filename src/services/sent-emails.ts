import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * Which of these Message-IDs the service sent on behalf of this organisation (its receipts, links
 * and staff alerts, as the sent-email log records them). The dev mailbox shows an organisation only
 * its own mail: another organisation's receipt carries working download links.
 */
export async function messageIdsOfOrganisation(em: EntityManager, orgId: string, messageIds: string[]): Promise<Set<string>> {
  if (messageIds.length === 0) return new Set();
  const rows = await em.execute<Array<{ message_id: string }>>(
    `select message_id from sent_email where organisation_id = ? and message_id in (select jsonb_array_elements_text(?::jsonb))`,
    [orgId, JSON.stringify(messageIds)],
  );
  return new Set(rows.map((r) => r.message_id));
}
