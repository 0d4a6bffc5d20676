/**
 * The organisation's own settings (owners and admins): for now the support address buyers are
 * shown when a download limit is reached (decisions §10).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { organisationSettingsRow, setSupportEmail } from '../accounts/account-store';
import { ValidationError } from '../domain/errors';
import { isEmailAddress, normaliseEmail } from '../domain/email';
import { boundedText, FIELD_LIMITS } from '../domain/field-limits';

export const OrganisationSettingsSchema = z.object({
  name: z.string(),
  supportEmail: z.string().nullable().describe('shown to buyers on the "download limit reached" page; null: none set'),
});
export type OrganisationSettings = z.infer<typeof OrganisationSettingsSchema>;

export const OrganisationSettingsInputSchema = z.object({
  supportEmail: boundedText(FIELD_LIMITS.email).nullable().optional()
    .describe('an email address; empty or null removes it; absent: unchanged'),
});
export type OrganisationSettingsInput = z.infer<typeof OrganisationSettingsInputSchema>;

export async function organisationSettings(em: EntityManager, orgId: string): Promise<OrganisationSettings> {
  const row = (await organisationSettingsRow(em, orgId))!;
  return { name: row.name, supportEmail: row.support_email };
}

export async function updateOrganisationSettings(em: EntityManager, orgId: string, input: OrganisationSettingsInput): Promise<OrganisationSettings> {
  if (input.supportEmail !== undefined) {
    const typed = input.supportEmail?.trim() ?? '';
    const supportEmail = typed === '' ? null : normaliseEmail(typed);
    if (supportEmail !== null && !isEmailAddress(supportEmail)) throw new ValidationError('supportEmail must be an email address');
    await setSupportEmail(em, orgId, supportEmail);
  }
  return organisationSettings(em, orgId);
}
