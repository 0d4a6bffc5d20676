import type { KeyRing } from './key-ring';

/** How a sealed value is stored in a text column: `enc:v1:<key id>:<base64url of iv|tag|ciphertext>`. */
const PREFIX = 'enc:v1:';

export function isSealed(stored: string): boolean {
  return stored.startsWith(PREFIX);
}

export function sealSecret(ring: KeyRing, plain: string): string {
  const { keyId, sealed } = ring.encrypt(Buffer.from(plain, 'utf8'));
  return `${PREFIX}${keyId}:${sealed.toString('base64url')}`;
}

/** A LIKE pattern of the values sealed under `keyId`, or under any key when it is not given. */
export function sealedLike(keyId?: string): string {
  return `${PREFIX}${keyId === undefined ? '' : `${keyId}:`}%`;
}

/** The key id a stored value is sealed under, or null for a value stored before sealing existed. */
export function sealedKeyId(stored: string): string | null {
  return isSealed(stored) ? stored.slice(PREFIX.length, stored.indexOf(':', PREFIX.length)) : null;
}

/** The plain secret: a sealed value opened, or a value stored before sealing existed as it is. */
export function openSecret(ring: KeyRing, stored: string): string {
  const keyId = sealedKeyId(stored);
  if (keyId === null) return stored;
  const sealed = Buffer.from(stored.slice(PREFIX.length + keyId.length + 1), 'base64url');
  return ring.decrypt(keyId, sealed).toString('utf8');
}
