/**
 * The service's encryption keys (SECRETS_KEY): AES-256-GCM for integration secrets at rest and for
 * Temporal payloads. The first key encrypts; every key decrypts, found by the key id stored with
 * each value, so keys can be rotated without a flag day. Embedded default: a key file under
 * DATA_DIR, made on first start. A use of its own (Temporal payloads) takes `forPurpose`'s keys,
 * so a value sealed for one use cannot be opened, or passed off, as one of another.
 */
import { createCipheriv, createDecipheriv, createHash, createSecretKey, hkdfSync, randomBytes, type KeyObject } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config';
import { dataDirSecret } from './data-dir-secret';

export const SECRETS_KEY_FILE = 'secrets-keys';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class KeyRing {
  /** Each key made a KeyObject once: a cipher given raw bytes imports them again (about 3× its cost for a payload). */
  private readonly byId: Map<string, KeyObject>;
  readonly currentId: string;

  /** `purpose`: each key replaced by its HKDF-SHA256 derivation for that purpose, under the same id. */
  constructor(private readonly keys: Buffer[], purpose?: string) {
    if (keys.length === 0) throw new Error('a key ring needs at least one key');
    for (const key of keys) if (key.length !== KEY_BYTES) throw new Error(`each key must be ${KEY_BYTES} bytes`);
    this.byId = new Map(keys.map((key) => [keyIdOf(key), createSecretKey(purpose === undefined ? key : derivedKey(key, purpose))]));
    this.currentId = keyIdOf(keys[0]);
  }

  /** The same keys, ids and rotation, derived for one purpose: what they seal opens under no other. */
  forPurpose(purpose: string): KeyRing {
    return new KeyRing(this.keys, purpose);
  }

  /** `iv | tag | ciphertext` under the current key, with its id. */
  encrypt(plain: Buffer): { keyId: string; sealed: Buffer } {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.byId.get(this.currentId)!, iv);
    const body = Buffer.concat([cipher.update(plain), cipher.final()]);
    return { keyId: this.currentId, sealed: Buffer.concat([iv, cipher.getAuthTag(), body]) };
  }

  /** Throws for an unknown key id, or a value altered or sealed under another key. */
  decrypt(keyId: string, sealed: Buffer): Buffer {
    const key = this.byId.get(keyId);
    if (!key) throw new Error(`no key with id ${keyId} in the key ring (SECRETS_KEY)`);
    const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES));
    decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
  }
}

function derivedKey(key: Buffer, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), `delivery-service ${purpose}`, KEY_BYTES));
}

/** Not secret: the first 8 hex digits of the key's SHA-256. */
export function keyIdOf(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

function parseKeys(text: string, where: string): Buffer[] {
  const keys = text.split(/[\s,]+/).filter((k) => k !== '').map((k) => Buffer.from(k, 'base64'));
  if (keys.length === 0 || keys.some((k) => k.length !== KEY_BYTES)) {
    throw new Error(`${where}: expected one or more base64 keys of ${KEY_BYTES} bytes (openssl rand -base64 32), the current one first`);
  }
  return keys;
}

export function newKey(): string {
  return randomBytes(KEY_BYTES).toString('base64');
}

/** SECRETS_KEY when set; else the key file under DATA_DIR, made with one new key on first start. */
export async function loadKeyRing(config: Pick<Config, 'secretsKey' | 'dataDir'>): Promise<KeyRing> {
  if (config.secretsKey !== undefined) return new KeyRing(parseKeys(config.secretsKey, 'SECRETS_KEY'));
  const text = await dataDirSecret(config.dataDir, SECRETS_KEY_FILE, newKey);
  return new KeyRing(parseKeys(text, path.join(config.dataDir, SECRETS_KEY_FILE)));
}

/**
 * Puts a new key first in the embedded key file (older keys stay, to decrypt what they sealed).
 * With SECRETS_KEY set there is no file to change: the operator puts the new key first there.
 */
export async function addKeyToFile(config: Pick<Config, 'dataDir'>): Promise<void> {
  const file = path.join(config.dataDir, SECRETS_KEY_FILE);
  const existing = await readFile(file, 'utf8');
  await writeFile(file, `${newKey()}\n${existing}`, { mode: 0o600 });
}
