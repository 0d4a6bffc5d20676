/**
 * License keys (decisions §14): a product's key policy, the form of a generated key and the rules
 * of a pool upload. Plain data and pure functions (the workflows' sandbox imports it).
 */
import { unstorableText } from './storable-text';

export const LICENSE_SOURCES = ['generated', 'pool'] as const;
export type LicenseSource = (typeof LICENSE_SOURCES)[number];

/** A product's `licenseKeys`: null = no keys (the default). */
export type LicensePolicy = { source: LicenseSource; activationLimit: number | null } | null;

/** Crockford's base32: no I, L, O or U, so a key read aloud or typed from paper is not misread. */
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const KEY_GROUPS = 4;
const GROUP_LENGTH = 5;
/** 20 characters of 5 bits. */
export const GENERATED_KEY_BITS = KEY_GROUPS * GROUP_LENGTH * 5;

/**
 * A generated key, `XXXXX-XXXXX-XXXXX-XXXXX`, from at least 13 random bytes (100 of their bits are used).
 * The caller supplies the bytes (crypto.randomBytes) so that this stays pure.
 */
export function generatedKeyOf(random: Uint8Array): string {
  if (random.length * 8 < GENERATED_KEY_BITS) throw new RangeError(`a generated key needs ${GENERATED_KEY_BITS} random bits`);
  let bits = 0n;
  for (const byte of random.subarray(0, 13)) bits = (bits << 8n) | BigInt(byte);
  const characters: string[] = [];
  for (let i = 0; i < KEY_GROUPS * GROUP_LENGTH; i += 1) {
    characters.push(CROCKFORD[Number(bits & 31n)]);
    bits >>= 5n;
  }
  const groups: string[] = [];
  for (let g = 0; g < KEY_GROUPS; g += 1) groups.push(characters.slice(g * GROUP_LENGTH, (g + 1) * GROUP_LENGTH).join(''));
  return groups.join('-');
}

export const GENERATED_KEY_RE = /^[0-9A-HJKMNP-TV-Z]{5}(-[0-9A-HJKMNP-TV-Z]{5}){3}$/;

/** The longest pool key, and the most keys one upload may hold (decisions §14). */
export const MAX_POOL_KEY_LENGTH = 200;
export const MAX_KEYS_PER_UPLOAD = 10_000;
/** Below this many available keys the owners and admins are warned (once, until the pool is back at it). */
export const LOW_POOL_THRESHOLD = 10;
/** The item reason of a sale whose receipt waits for a pool key. */
export const WAITING_FOR_KEY_REASON = 'waiting for a license key';

/**
 * Where a purchase of a pool product stands: `issued` a key, `waiting` for one, `withdrawn` (revoked
 * while waiting), or `none` (it needs no key).
 */
export type ClaimState = 'issued' | 'waiting' | 'withdrawn' | 'none';

export type PoolUpload = { ok: true; keys: string[] } | { ok: false; error: string };

/**
 * The keys of an uploaded text: one per line (CRLF or LF), each trimmed, blank lines ignored (a key
 * repeated in the text, or already held, is a duplicate when stored). A line over the limit or that
 * cannot be stored as given (`unstorableText`), or too many keys, refuses the whole upload, naming the
 * first line at fault, so nothing is half-added.
 */
export function parsePoolUpload(text: string): PoolUpload {
  const keys: string[] = [];
  const lines = text.split(/\r?\n/);
  for (const [index, line] of lines.entries()) {
    const key = line.trim();
    if (key === '') continue;
    if (key.length > MAX_POOL_KEY_LENGTH) {
      return { ok: false, error: `line ${index + 1}: a license key is at most ${MAX_POOL_KEY_LENGTH} characters` };
    }
    const unstorable = unstorableText(key);
    if (unstorable !== null) return { ok: false, error: `line ${index + 1}: a license key ${unstorable}` };
    keys.push(key);
    if (keys.length > MAX_KEYS_PER_UPLOAD) return { ok: false, error: `at most ${MAX_KEYS_PER_UPLOAD} license keys per upload` };
  }
  if (keys.length === 0) return { ok: false, error: 'the body holds no license key: send text/plain, one key per line' };
  return { ok: true, keys };
}

/** A key's status: `revoked` while its purchase is revoked (refund, chargeback, by hand), else `active`. */
export const LICENSE_STATUSES = ['active', 'revoked'] as const;
export type LicenseStatus = (typeof LICENSE_STATUSES)[number];

/** A purchase's issued key as staff, the purchase page and the dispute evidence show it. */
export interface IssuedLicense {
  key: string;
  status: LicenseStatus;
  /** The product's limit; null = unlimited. */
  activationLimit: number | null;
  /** Every installation, oldest first; a deactivated one takes no seat. */
  activations: Array<{ instanceId: string; instanceName: string; activatedAt: string; deactivatedAt: string | null }>;
}
