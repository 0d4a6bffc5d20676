/**
 * The organisation's own settings (owners and admins): the support address buyers are shown when a
 * download limit is reached (decisions §10), and how long after the receipt a buyer who has not
 * downloaded is reminded (§16).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { organisationSettingsRow, writeOrganisationSettings, type OrganisationSettingsRow } from '../accounts/account-store';
import { ValidationError } from '../domain/errors';
import { isEmailAddress, normaliseEmail } from '../domain/email';
import { boundedText, FIELD_LIMITS } from '../domain/field-limits';
import { DEFAULT_REMINDER_AFTER_MINUTES, MAX_REMINDER_AFTER_MINUTES, MIN_REMINDER_AFTER_MINUTES } from '../domain/reminder';

const REMINDER_RANGE = `a whole number of minutes from ${MIN_REMINDER_AFTER_MINUTES} to ${MAX_REMINDER_AFTER_MINUTES} (a year)`;

/** The delay as typed: whole minutes within the range, each refusal in words (the 400's `error`). */
export function reminderAfterMinutesSchema() {
  return z.number({ error: `must be ${REMINDER_RANGE}, or null to turn reminders off` })
    .int({ error: `must be ${REMINDER_RANGE}` })
    .min(MIN_REMINDER_AFTER_MINUTES, { error: `must be ${REMINDER_RANGE}` })
    .max(MAX_REMINDER_AFTER_MINUTES, { error: `must be ${REMINDER_RANGE}` });
}

const REMINDER_DESCRIPTION = `minutes after a purchase's receipt was accepted at which a buyer who has completed no file transfer `
  + `gets one reminder with a fresh link (default ${DEFAULT_REMINDER_AFTER_MINUTES}, a day); null: no reminders. `
  + 'A change applies to purchases whose receipts go out after it';

export const OrganisationSettingsSchema = z.object({
  name: z.string(),
  supportEmail: z.string().nullable().describe('shown to buyers on the "download limit reached" page; null: none set'),
  reminderAfterMinutes: z.number().int().nullable().describe(REMINDER_DESCRIPTION),
});
export type OrganisationSettings = z.infer<typeof OrganisationSettingsSchema>;

export const OrganisationSettingsInputSchema = z.object({
  supportEmail: boundedText(FIELD_LIMITS.email).nullable().optional()
    .describe('an email address; empty or null removes it; absent: unchanged'),
  reminderAfterMinutes: reminderAfterMinutesSchema().nullable().optional()
    .describe('null turns reminders off; absent: unchanged'),
});
export type OrganisationSettingsInput = z.infer<typeof OrganisationSettingsInputSchema>;

export async function organisationSettings(em: EntityManager, orgId: string): Promise<OrganisationSettings> {
  return settingsOf((await organisationSettingsRow(em, orgId))!);
}

function settingsOf(row: OrganisationSettingsRow): OrganisationSettings {
  return { name: row.name, supportEmail: row.support_email, reminderAfterMinutes: row.reminder_after_minutes };
}

function supportEmailOf(value: string | null): string | null {
  const typed = value?.trim() ?? '';
  const supportEmail = typed === '' ? null : normaliseEmail(typed);
  if (supportEmail !== null && !isEmailAddress(supportEmail)) throw new ValidationError('supportEmail must be an email address');
  return supportEmail;
}

/** The delay as a form field holds it: empty turns reminders off; anything else must be in the range (400). */
export function reminderAfterMinutesFromForm(typed: string): number | null {
  if (typed.trim() === '') return null;
  const parsed = reminderAfterMinutesSchema().safeParse(Number(typed.trim()));
  if (!parsed.success) throw new ValidationError(`reminderAfterMinutes: ${parsed.error.issues[0].message}`);
  return parsed.data;
}

/** The support address is checked before anything is written: a refused body changes nothing. */
export async function updateOrganisationSettings(em: EntityManager, orgId: string, input: OrganisationSettingsInput): Promise<OrganisationSettings> {
  const supportEmail = input.supportEmail === undefined ? undefined : supportEmailOf(input.supportEmail);
  return settingsOf((await writeOrganisationSettings(em, orgId, { supportEmail, reminderAfterMinutes: input.reminderAfterMinutes }))!);
}
