import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/**
 * Custom search attributes of the fulfilment workflows, so that an operator can find an order's
 * workflows in the Temporal UI. Every process registers the missing ones on its namespace at start
 * (register-search-attributes.ts), so a fresh cluster needs no manual step; the embedded dev server
 * is also started with them.
 */
export const SEARCH_ATTRIBUTES = {
  OrgId: 'Keyword',
  Platform: 'Keyword',
  OrderId: 'Keyword',
} as const satisfies Record<string, 'Keyword'>;

export type SearchAttributeName = keyof typeof SEARCH_ATTRIBUTES;

/** Typed keys for `typedSearchAttributes` / `upsertSearchAttributes`. */
export const OrgIdSearchAttribute = defineSearchAttributeKey('OrgId', SearchAttributeType.KEYWORD);
export const PlatformSearchAttribute = defineSearchAttributeKey('Platform', SearchAttributeType.KEYWORD);
export const OrderIdSearchAttribute = defineSearchAttributeKey('OrderId', SearchAttributeType.KEYWORD);
