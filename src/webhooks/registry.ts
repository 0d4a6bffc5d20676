/** The adapter of each platform, by the path word of the spec (`/webhooks/<platform>/...`). */
import { PLATFORMS, type Platform } from '../domain/platforms';
import type { PlatformAdapter } from './adapter';
import { cartE } from './cart-e';
import { paymentsC } from './payments-c';
import { pluginB } from './plugin-b';
import { resellerD } from './reseller-d';
import { resellerDClassic } from './reseller-d-classic';
import { storefrontA } from './storefront-a';

/** Every platform of the list must have its adapter, under its own word: checked when compiling. */
export const adapters: { readonly [P in Platform]: PlatformAdapter<P> } = {
  'storefront-a': storefrontA,
  'plugin-b': pluginB,
  'payments-c': paymentsC,
  'reseller-d': resellerD,
  'reseller-d-classic': resellerDClassic,
  'cart-e': cartE,
};

/** The adapters in the order of the platform list (the Integrations page, the routes). */
export const ADAPTERS: readonly PlatformAdapter[] = PLATFORMS.map((platform) => adapters[platform]);

/** Where a platform sends this organisation's deliveries (a shared route serves every organisation). */
export function webhookPath(adapter: PlatformAdapter, orgId: string): string {
  return adapter.routing.kind === 'shared' ? `/webhooks/${adapter.platform}` : `/webhooks/${orgId}/${adapter.platform}`;
}
