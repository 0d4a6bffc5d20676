import { createHash, randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/** SHA-256 hex: enough for high-entropy secrets (API keys, download tokens), ASVS 6.5.2. */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** 32 random bytes (256 bits) from the CSPRNG, URL-safe. */
export function randomSecret(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

export interface MintedApiKey {
  key: string;
  hash: string;
  /** Shown on the API Key page to recognise the key without revealing it. */
  prefix: string;
}

const API_KEY_PREFIX = 'dlv_';

export function mintApiKey(): MintedApiKey {
  const key = `${API_KEY_PREFIX}${randomSecret()}`;
  return { key, hash: sha256Hex(key), prefix: key.slice(0, API_KEY_PREFIX.length + 6) };
}

export interface MintedToken {
  token: string;
  hash: string;
}

/** A download link token: random, stored only as its hash. */
export function mintDownloadToken(): MintedToken {
  const token = randomSecret();
  return { token, hash: sha256Hex(token) };
}

/** OWASP's scrypt parameters (128 MiB, about a third of a second here). Hashes of weaker ones are upgraded at sign-in. */
const SCRYPT: Required<Pick<ScryptOptions, 'N' | 'r' | 'p'>> = { N: 2 ** 17, r: 8, p: 1 };
const KEY_LENGTH = 32;

function scryptAsync(password: string, salt: Buffer, params: typeof SCRYPT): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password, salt, KEY_LENGTH, { ...params, maxmem: 128 * params.N * params.r * 2 }, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}

/** scrypt (memory-hard), stored self-describing so parameters can rise later. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scryptAsync(password, salt, SCRYPT);
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64')}$${hash.toString('base64')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [, n, r, p, salt, hash] = parts;
  const expected = Buffer.from(hash, 'base64');
  const actual = await scryptAsync(password, Buffer.from(salt, 'base64'), { N: Number(n), r: Number(r), p: Number(p) });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** A stored hash made with weaker parameters than today's: re-hash it while the password is at hand. */
export function needsRehash(stored: string): boolean {
  const [scheme, n, r, p] = stored.split('$');
  return scheme !== 'scrypt' || Number(n) < SCRYPT.N || Number(r) < SCRYPT.r || Number(p) < SCRYPT.p;
}
