/**
 * License activations as stored (decisions §14): the installations of each issued key, and the
 * `license.*` events that describe them. Owns the table `license_activation`; reads `license_key`,
 * `purchase` (a revoked purchase's key is revoked) and `product` (its activation limit).
 *
 * An activation or deactivation holds its key's row `for update` while it counts the seats and
 * writes, so two installs racing for the last seat cannot both have it. The count is read by a
 * statement of its own after the lock: a count inside the locking statement would be of that
 * statement's snapshot, from before a racing activation committed.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { isoUtc, sql, statement, trustedSql, type Parameters } from '../db/sql';

/** An issued key with what the license API answers about it. */
export interface KeyRow {
  id: string;
  key: string;
  organisation_id: string;
  product_id: string;
  product_name: string;
  purchase_id: string;
  revoked: boolean;
  /** The product's limit; null = unlimited. */
  activation_limit: number | null;
}

const KEY_COLUMNS = {
  id: true, key: true, organisation_id: true, product_id: true, product_name: true, purchase_id: true, revoked: true, activation_limit: true,
} as const;

/** Only an issued key is a credential: a pool key nobody bought yet is unknown to the license API. */
const keyColumns = sql`k.id, k.key, k.organisation_id, k.product_id, pr.name as product_name, k.purchase_id,
       pu.revoked_at is not null as revoked, pr.license_activation_limit as activation_limit`;
const issuedKeys = sql`license_key k join purchase pu on pu.id = k.purchase_id join product pr on pr.id = k.product_id`;
const keySelect = sql`select ${keyColumns} from ${issuedKeys}`;

const seatsUsed = sql`(select count(*)::int from license_activation a where a.license_key_id = k.id and a.deactivated_at is null)`;

export interface ValidatedKeyRow extends KeyRow {
  used: number;
  instance_id: string | null;
  instance_name: string | null;
  instance_activated_at: string | null;
  instance_deactivated_at: string | null;
}

/** One read for POST /licenses/validate: the key, its seats and the named installation (of this key only). */
const validateRead = statement<ValidatedKeyRow, { key: string; instanceId: string | null }>(
  { ...KEY_COLUMNS, used: true, instance_id: true, instance_name: true, instance_activated_at: true, instance_deactivated_at: true },
  (p) => sql`select ${keyColumns}, ${seatsUsed} as used, i.id as instance_id, i.instance_name,
       ${isoUtc('i.activated_at')} as instance_activated_at, ${isoUtc('i.deactivated_at')} as instance_deactivated_at
     from ${issuedKeys} left join license_activation i on i.id = ${p.instanceId}::uuid and i.license_key_id = k.id
     where k.key = ${p.key}`,
);

/** The issued key of that text, its used seats and, when asked, one of its installations. */
export function findKeyForValidation(em: EntityManager, key: string, instanceId: string | null): Promise<ValidatedKeyRow | undefined> {
  return validateRead.first(em, { key, instanceId });
}

const lockByText = statement<KeyRow, { key: string }>(KEY_COLUMNS, (p) => sql`${keySelect} where k.key = ${p.key} for update of k`);

const lockOfPurchase = statement<KeyRow, { orgId: string; purchaseId: string }>(
  KEY_COLUMNS, (p) => sql`${keySelect} where k.purchase_id = ${p.purchaseId} and k.organisation_id = ${p.orgId} for update of k`,
);

/** In the caller's transaction: the issued key of that text, its row locked until the end of it. */
export function lockKeyByText(tx: EntityManager, key: string): Promise<KeyRow | undefined> {
  return lockByText.first(tx, { key });
}

/** In the caller's transaction: the key of the organisation's purchase, its row locked until the end of it. */
export function lockKeyOfPurchase(tx: EntityManager, orgId: string, purchaseId: string): Promise<KeyRow | undefined> {
  return lockOfPurchase.first(tx, { orgId, purchaseId });
}

const usedSeatsRead = statement<{ used: number }, { keyId: string }>(
  { used: true }, (p) => sql`select count(*)::int as used from license_activation where license_key_id = ${p.keyId} and deactivated_at is null`,
);

/** Activations of the key that are not deactivated: the seats taken. */
export async function usedSeats(em: EntityManager, keyId: string): Promise<number> {
  return (await usedSeatsRead.first(em, { keyId }))?.used ?? 0;
}

/** What a `license.*` event says (decisions §13): the seats as they are once its change is made. */
interface EventParams {
  orgId: string;
  purchaseId: string;
  productId: string;
  key: string;
  limit: number | null;
  usedAfter: number;
}

const ACTIVATED = trustedSql("'license.activated'");
const DEACTIVATED = trustedSql("'license.deactivated'");

/** The event of the change `c` (the installation's `id` and `instance_name`), recorded in its statement. */
const recordLicenseEvent = (p: Parameters<EventParams>, type: typeof ACTIVATED) => sql`record_outbound_event(${p.orgId}::uuid, ${type}, c.id, null,
       jsonb_build_object('purchaseId', ${p.purchaseId}::uuid, 'productId', ${p.productId}::uuid, 'key', ${p.key}::text,
         'instanceId', c.id, 'instanceName', c.instance_name,
         'activations', jsonb_build_object('limit', ${p.limit}::int, 'used', ${p.usedAfter}::int)))`;

const insertActivation = statement<{ instance_id: string; recorded: unknown }, EventParams & { keyId: string; instanceName: string }>(
  { instance_id: true, recorded: true },
  (p) => sql`with c as (
       insert into license_activation (id, license_key_id, instance_name, activated_at)
       values (gen_random_uuid(), ${p.keyId}, ${p.instanceName}, now()) returning id, instance_name)
     select c.id as instance_id, ${recordLicenseEvent(p, ACTIVATED)} as recorded from c`,
);

/** In the transaction that locked the key: a new installation, and its `license.activated` event. Answers its id. */
export async function addActivation(tx: EntityManager, key: KeyRow, instanceName: string, usedAfter: number): Promise<string> {
  const row = await insertActivation.first(tx, {
    keyId: key.id, instanceName, orgId: key.organisation_id, purchaseId: key.purchase_id, productId: key.product_id, key: key.key,
    limit: key.activation_limit, usedAfter,
  });
  if (!row) throw new Error('the activation was not inserted');
  return row.instance_id;
}

const markDeactivated = statement<{ instance_id: string; recorded: unknown }, EventParams & { keyId: string; instanceId: string }>(
  { instance_id: true, recorded: true },
  (p) => sql`with c as (
       update license_activation set deactivated_at = now()
       where id = ${p.instanceId}::uuid and license_key_id = ${p.keyId} and deactivated_at is null returning id, instance_name)
     select c.id as instance_id, ${recordLicenseEvent(p, DEACTIVATED)} as recorded from c`,
);

const activationState = statement<{ deactivated: boolean }, { keyId: string; instanceId: string }>(
  { deactivated: true },
  (p) => sql`select deactivated_at is not null as deactivated from license_activation where id = ${p.instanceId}::uuid and license_key_id = ${p.keyId}`,
);

/**
 * In the transaction that locked the key: whether that installation of it is `active`, already
 * `deactivated`, or `unknown`. Only an active one takes a seat.
 */
export async function activationOfKey(tx: EntityManager, keyId: string, instanceId: string): Promise<'active' | 'deactivated' | 'unknown'> {
  const row = await activationState.first(tx, { keyId, instanceId });
  if (!row) return 'unknown';
  return row.deactivated ? 'deactivated' : 'active';
}

/** In the transaction that locked the key: the active installation is deactivated, with its `license.deactivated` event. */
export async function deactivateActivation(tx: EntityManager, key: KeyRow, instanceId: string, usedAfter: number): Promise<void> {
  await markDeactivated.run(tx, {
    keyId: key.id, instanceId, orgId: key.organisation_id, purchaseId: key.purchase_id, productId: key.product_id, key: key.key,
    limit: key.activation_limit, usedAfter,
  });
}

export interface PurchaseKeyRow {
  /** The purchase's product issues keys. */
  wanted: boolean;
  key_id: string | null;
  key: string | null;
  revoked: boolean;
  activation_limit: number | null;
}

const purchaseKeyRead = statement<PurchaseKeyRow, { orgId: string; purchaseId: string }>(
  { wanted: true, key_id: true, key: true, revoked: true, activation_limit: true },
  (p) => sql`select pu.license_wanted as wanted, k.id as key_id, k.key, pu.revoked_at is not null as revoked,
       pr.license_activation_limit as activation_limit
     from purchase pu join product pr on pr.id = pu.product_id left join license_key k on k.purchase_id = pu.id
     where pu.id = ${p.purchaseId} and pu.organisation_id = ${p.orgId}`,
);

/** The organisation's purchase with its key, if any; undefined for an unknown or another organisation's purchase. */
export function purchaseKey(em: EntityManager, orgId: string, purchaseId: string): Promise<PurchaseKeyRow | undefined> {
  return purchaseKeyRead.first(em, { orgId, purchaseId });
}

export interface ActivationRow {
  instance_id: string;
  instance_name: string;
  activated_at: string;
  deactivated_at: string | null;
}

const activationsRead = statement<ActivationRow, { keyId: string }>(
  { instance_id: true, instance_name: true, activated_at: true, deactivated_at: true },
  (p) => sql`select id as instance_id, instance_name, ${isoUtc('activated_at')} as activated_at, ${isoUtc('deactivated_at')} as deactivated_at
     from license_activation where license_key_id = ${p.keyId} order by activated_at, id`,
);

/** Every installation of the key, deactivated ones included, oldest first. */
export function activationsOfKey(em: EntityManager, keyId: string): Promise<ActivationRow[]> {
  return activationsRead.rows(em, { keyId });
}
