import { createHash, randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { BusyError } from '../domain/errors';
import { ConcurrencyGate } from './concurrency-gate';

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

/**
 * Password hashes one process computes at once. scrypt runs on libuv's thread pool (4 threads
 * unless UV_THREADPOOL_SIZE says otherwise), which file reads and DNS lookups need too: a flood of
 * sign-ins must leave them threads (security review M5). Past the limit a hash is refused at once,
 * before any hashing, with a BusyError (503, Retry-After).
 */
export const MAX_CONCURRENT_PASSWORD_HASHES = 2;
export const passwordHashSlots = new ConcurrencyGate(MAX_CONCURRENT_PASSWORD_HASHES);

async function scryptAsync(password: string, salt: Buffer, params: typeof SCRYPT): Promise<Buffer> {
  const release = passwordHashSlots.tryEnter();
  if (!release) throw new BusyError('too many passwords are being checked right now: please try again in a moment');
  try {
    return await new Promise((resolve, reject) => {
      scrypt(password, salt, KEY_LENGTH, { ...params, maxmem: 128 * params.N * params.r * 2 }, (err, key) =>
        err ? reject(err) : resolve(key),
      );
    });
  } finally {
    release();
  }
}

const storedHash = (salt: Buffer, hash: Buffer) =>
  `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64')}$${hash.toString('base64')}`;

/** scrypt (memory-hard), stored self-describing so parameters can rise later. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  return storedHash(salt, await scryptAsync(password, salt, SCRYPT));
}

/**
 * A stored hash of today's parameters that no password matches (random bytes where the hash goes):
 * checking a password against it costs what checking against a real one does, without hashing
 * anything to make it.
 */
export function unmatchableHash(): string {
  return storedHash(randomBytes(16), randomBytes(KEY_LENGTH));
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
