/** The adapter of each platform, by the path word of the spec (`/webhooks/<platform>/...`). */
import { isPlatform, type Platform } from '../domain/platforms';
import type { PlatformAdapter } from './adapter';
import { cartE } from './cart-e';
import { paymentsC } from './payments-c';
import { pluginB } from './plugin-b';
import { resellerD } from './reseller-d';
import { resellerDClassic } from './reseller-d-classic';
import { storefrontA } from './storefront-a';

export const adapters: Record<Platform, PlatformAdapter> = {
  'storefront-a': storefrontA,
  'plugin-b': pluginB,
  'payments-c': paymentsC,
  'reseller-d': resellerD,
  'reseller-d-classic': resellerDClassic,
  'cart-e': cartE,
};

/** The adapter for a platform word, or undefined when the word names no platform. */
export function adapterFor(word: string): PlatformAdapter | undefined {
  return isPlatform(word) ? adapters[word] : undefined;
}
