import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { BusyError } from '../domain/errors';
import { ConcurrencyGate } from './concurrency-gate';

/** scrypt's cost parameters: N (CPU and memory, a power of two), r (block size), p (parallelism). */
export interface ScryptCost {
  N: number;
  r: number;
  p: number;
}

/** OWASP's scrypt parameters (128 MiB, about a third of a second here): the default of PASSWORD_SCRYPT_N. */
export const OWASP_SCRYPT_COST: Readonly<ScryptCost> = Object.freeze({ N: 2 ** 17, r: 8, p: 1 });
const KEY_LENGTH = 32;

/**
 * Password hashes one process computes at once. scrypt runs on libuv's thread pool (4 threads
 * unless UV_THREADPOOL_SIZE says otherwise), which file reads and DNS lookups need too: a flood of
 * sign-ins must leave them threads (security review M5). Past the limit a hash is refused at once,
 * before any hashing, with a BusyError (503, Retry-After).
 */
export const MAX_CONCURRENT_PASSWORD_HASHES = 2;
export const passwordHashSlots = new ConcurrencyGate(MAX_CONCURRENT_PASSWORD_HASHES);

async function scryptAsync(password: string, salt: Buffer, cost: ScryptCost): Promise<Buffer> {
  const release = passwordHashSlots.tryEnter();
  if (!release) throw new BusyError('too many passwords are being checked right now: please try again in a moment');
  try {
    return await new Promise((resolve, reject) => {
      scrypt(password, salt, KEY_LENGTH, { ...cost, maxmem: 128 * cost.N * cost.r * 2 }, (err, key) =>
        err ? reject(err) : resolve(key),
      );
    });
  } finally {
    release();
  }
}

/**
 * Staff passwords, hashed with scrypt (memory-hard) at the service's cost (PASSWORD_SCRYPT_N) and
 * stored self-describing (`scrypt$N$r$p$salt$hash`): a hash is checked at the cost it was made
 * with, and one made cheaper than today's is upgraded at the next sign-in.
 */
export class PasswordHasher {
  constructor(readonly cost: Readonly<ScryptCost>) {}

  async hash(password: string): Promise<string> {
    const salt = randomBytes(16);
    return this.stored(salt, await scryptAsync(password, salt, this.cost));
  }

  async verify(password: string, stored: string): Promise<boolean> {
    const parts = stored.split('$');
    if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
    const [, n, r, p, salt, hash] = parts;
    const expected = Buffer.from(hash, 'base64');
    const actual = await scryptAsync(password, Buffer.from(salt, 'base64'), { N: Number(n), r: Number(r), p: Number(p) });
    return actual.length === expected.length && timingSafeEqual(actual, expected);
  }

  /** A stored hash made cheaper than today's cost: re-hash it while the password is at hand. */
  needsRehash(stored: string): boolean {
    const [scheme, n, r, p] = stored.split('$');
    return scheme !== 'scrypt' || Number(n) < this.cost.N || Number(r) < this.cost.r || Number(p) < this.cost.p;
  }

  /**
   * A stored hash of today's cost that no password matches (random bytes where the hash goes):
   * checking a password against it costs what checking against a real one does, without hashing
   * anything to make it.
   */
  unmatchableHash(): string {
    return this.stored(randomBytes(16), randomBytes(KEY_LENGTH));
  }

  private stored(salt: Buffer, hash: Buffer): string {
    const { N, r, p } = this.cost;
    return `scrypt$${N}$${r}$${p}$${salt.toString('base64')}$${hash.toString('base64')}`;
  }
}
