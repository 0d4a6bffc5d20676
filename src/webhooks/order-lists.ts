/**
 * The platforms whose order lists the service can read (decisions §15), each client beside its
 * webhook adapter. A platform joins by adding its client here.
 */
import type { Platform } from '../domain/platforms';
import type { OrderListClient } from './order-list';
import { cartEOrders } from './cart-e-orders';
import { paymentsCOrders } from './payments-c-orders';
import { pluginBOrders } from './plugin-b-orders';
import { resellerDOrders } from './reseller-d-orders';
import { storefrontAOrders } from './storefront-a-orders';

export const ORDER_LIST_CLIENTS: ReadonlyArray<OrderListClient<Record<string, string>>> = [
  storefrontAOrders as unknown as OrderListClient<Record<string, string>>,
  pluginBOrders as unknown as OrderListClient<Record<string, string>>,
  paymentsCOrders as unknown as OrderListClient<Record<string, string>>,
  resellerDOrders as unknown as OrderListClient<Record<string, string>>,
  cartEOrders as unknown as OrderListClient<Record<string, string>>,
];

export function orderListClientOf(platform: Platform): OrderListClient<Record<string, string>> | undefined {
  return ORDER_LIST_CLIENTS.find((c) => c.platform === platform);
}

/** Platforms with no order API at all (not merely one not read yet). */
export const NO_ORDER_API: readonly Platform[] = ['reseller-d-classic'];
