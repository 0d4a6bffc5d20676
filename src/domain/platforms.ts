/** The six sales platforms that send order webhooks, by the neutral path word of the spec. */
export const PLATFORMS = [
  'storefront-a',
  'plugin-b',
  'payments-c',
  'reseller-d',
  'reseller-d-classic',
  'cart-e',
] as const;
export type Platform = (typeof PLATFORMS)[number];

export function isPlatform(value: string): value is Platform {
  return (PLATFORMS as readonly string[]).includes(value);
}

/** Where a purchase came from: the API (key), the dashboard (session) or a platform word. */
export const PURCHASE_SOURCES = ['api', 'manual', ...PLATFORMS] as const;
export type PurchaseSource = (typeof PURCHASE_SOURCES)[number];

export function isPurchaseSource(value: string): value is PurchaseSource {
  return (PURCHASE_SOURCES as readonly string[]).includes(value);
}
