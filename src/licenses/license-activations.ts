/**
 * License activations (decisions §14): what the public license API does with a key (validate,
 * activate an installation, deactivate one) and what staff see and do on a purchase's key. A
 * change and its `license.*` event (§13) commit together.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { ConflictError, ForbiddenError, NotFoundError } from '../domain/errors';
import { LICENSE_STATUSES, type IssuedLicense, type LicenseStatus } from '../domain/license-keys';
import { isUuid } from '../domain/uuid';
import {
  activationOfKey, activationsOfKey, addActivation, deactivateActivation, findKeyForValidation, lockKeyByText, lockKeyOfPurchase,
  purchaseKey, usedSeats, type KeyRow,
} from './activation-store';

export const SeatsSchema = z.object({
  limit: z.number().int().nullable().describe('the product\'s activation limit; null = unlimited'),
  used: z.number().int().describe('activations not deactivated'),
});
export type Seats = z.infer<typeof SeatsSchema>;

/** `data` of `license.activated` and `license.deactivated`: the seats as they are once the change is made. */
export const LicenseEventDataSchema = z.object({
  purchaseId: z.string(),
  productId: z.string(),
  key: z.string(),
  instanceId: z.string(),
  instanceName: z.string(),
  activations: SeatsSchema,
});

export const ValidationJsonSchema = z.object({
  valid: z.boolean().describe('active, and (with `instanceId`) that installation is activated'),
  status: z.enum(LICENSE_STATUSES).describe('`revoked` when the purchase was refunded, charged back or revoked'),
  product: z.object({ id: z.string(), name: z.string() }),
  activations: SeatsSchema,
  instance: z.object({
    instanceId: z.string(),
    instanceName: z.string(),
    activatedAt: z.string(),
    deactivatedAt: z.string().nullable(),
  }).nullable().describe('the installation named by `instanceId`; null when none was named or it is not one of this key\'s'),
});
export type ValidationJson = z.infer<typeof ValidationJsonSchema>;

export const LICENSE_NOT_FOUND = 'license key not found';
const INSTANCE_NOT_FOUND = 'activation not found';

const statusOf = (key: Pick<KeyRow, 'revoked'>): LicenseStatus => (key.revoked ? 'revoked' : 'active');

/** POST /licenses/validate; undefined for a key that was never issued. */
export async function validateLicense(em: EntityManager, key: string, instanceId: string | null): Promise<ValidationJson | undefined> {
  const row = await findKeyForValidation(em, key, instanceId);
  if (!row) return undefined;
  const instance = row.instance_id === null ? null : {
    instanceId: row.instance_id,
    instanceName: row.instance_name ?? '',
    activatedAt: row.instance_activated_at ?? '',
    deactivatedAt: row.instance_deactivated_at,
  };
  const instanceValid = instanceId === null || (instance !== null && instance.deactivatedAt === null);
  return {
    valid: !row.revoked && instanceValid,
    status: statusOf(row),
    product: { id: row.product_id, name: row.product_name },
    activations: { limit: row.activation_limit, used: row.used },
    instance,
  };
}

/** POST /licenses/activate: a new installation takes a seat (403 revoked, 409 at the limit). */
export async function activateLicense(em: EntityManager, key: string, instanceName: string): Promise<{ instanceId: string; activations: Seats }> {
  return em.transactional(async (tx) => {
    const locked = await lockKeyByText(tx, key);
    if (!locked) throw new NotFoundError(LICENSE_NOT_FOUND);
    if (locked.revoked) throw new ForbiddenError('license revoked');
    const used = await usedSeats(tx, locked.id);
    if (locked.activation_limit !== null && used >= locked.activation_limit) throw new ConflictError('activation limit reached');
    const instanceId = await addActivation(tx, locked, instanceName, used + 1);
    return { instanceId, activations: { limit: locked.activation_limit, used: used + 1 } };
  });
}

/**
 * Deactivates an installation of the locked key: its seat is free. An installation deactivated
 * already stays as it is (no second event); one the key never had is 404.
 */
async function deactivateLocked(tx: EntityManager, locked: KeyRow, instanceId: string): Promise<Seats> {
  const state = isUuid(instanceId) ? await activationOfKey(tx, locked.id, instanceId) : 'unknown';
  if (state === 'unknown') throw new NotFoundError(INSTANCE_NOT_FOUND);
  const used = await usedSeats(tx, locked.id);
  if (state === 'deactivated') return { limit: locked.activation_limit, used };
  await deactivateActivation(tx, locked, instanceId, used - 1);
  return { limit: locked.activation_limit, used: used - 1 };
}

/** POST /licenses/deactivate. */
export async function deactivateLicense(em: EntityManager, key: string, instanceId: string): Promise<{ activations: Seats }> {
  return em.transactional(async (tx) => {
    const locked = await lockKeyByText(tx, key);
    if (!locked) throw new NotFoundError(LICENSE_NOT_FOUND);
    return { activations: await deactivateLocked(tx, locked, instanceId) };
  });
}

/** DELETE /api/purchases/{id}/license/activations/{instanceId}: staff free a seat of the purchase's key. */
export async function deactivateForStaff(em: EntityManager, orgId: string, purchaseId: string, instanceId: string): Promise<void> {
  if (!isUuid(purchaseId)) throw new NotFoundError('purchase not found');
  await em.transactional(async (tx) => {
    const locked = await lockKeyOfPurchase(tx, orgId, purchaseId);
    if (!locked) throw new NotFoundError('this purchase has no license key');
    await deactivateLocked(tx, locked, instanceId);
  });
}

/** A purchase's key as staff see it: `none` when its product issues no keys, `waiting` for a pool key. */
export type PurchaseLicenseState = { kind: 'none' } | { kind: 'waiting' } | { kind: 'issued'; license: IssuedLicense };

/** The organisation's purchase's key with its installations; 404 for an unknown or another organisation's purchase. */
export async function purchaseLicenseState(em: EntityManager, orgId: string, purchaseId: string): Promise<PurchaseLicenseState> {
  const row = isUuid(purchaseId) ? await purchaseKey(em, orgId, purchaseId) : undefined;
  if (!row) throw new NotFoundError('purchase not found');
  if (row.key_id === null || row.key === null) return { kind: row.wanted ? 'waiting' : 'none' };
  const activations = await activationsOfKey(em, row.key_id);
  return {
    kind: 'issued',
    license: {
      key: row.key,
      status: statusOf(row),
      activationLimit: row.activation_limit,
      activations: activations.map((a) => ({
        instanceId: a.instance_id, instanceName: a.instance_name, activatedAt: a.activated_at, deactivatedAt: a.deactivated_at,
      })),
    },
  };
}

export const StaffLicenseJsonSchema = z.object({
  key: z.string(),
  status: z.enum(LICENSE_STATUSES),
  activationLimit: z.number().int().nullable().describe('null = unlimited'),
  activations: z.array(z.object({ instanceId: z.string(), instanceName: z.string(), activatedAt: z.string() }))
    .describe('the installations that take a seat (not deactivated), oldest first'),
});
export type StaffLicenseJson = z.infer<typeof StaffLicenseJsonSchema>;

/** GET /api/purchases/{id}/license: 404 also when the purchase has no key (yet). */
export async function staffLicense(em: EntityManager, orgId: string, purchaseId: string): Promise<StaffLicenseJson> {
  const state = await purchaseLicenseState(em, orgId, purchaseId);
  if (state.kind !== 'issued') throw new NotFoundError(state.kind === 'waiting' ? 'this purchase is waiting for a license key' : 'this purchase has no license key');
  const { license } = state;
  return {
    key: license.key,
    status: license.status,
    activationLimit: license.activationLimit,
    activations: license.activations.filter((a) => a.deactivatedAt === null)
      .map((a) => ({ instanceId: a.instanceId, instanceName: a.instanceName, activatedAt: a.activatedAt })),
  };
}
