import { ConcurrencyGate } from '../security/concurrency-gate';

/**
 * One password check at a time per client address (an IPv6 /64) in this process, for sign-ins and
 * password changes alike: a second one while the first is checked is answered 429 at once, so that
 * one client cannot hold several of the few password-hashing places (MAX_CONCURRENT_PASSWORD_HASHES)
 * that everyone's sign-ins share.
 */
export const passwordChecksInFlight = new ConcurrencyGate(1);
