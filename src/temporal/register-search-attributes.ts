import type { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { SEARCH_ATTRIBUTES, type SearchAttributeName } from './search-attributes';

const CUSTOM_SEARCH_ATTRIBUTES = Object.keys(SEARCH_ATTRIBUTES) as SearchAttributeName[];

/**
 * Registers the service's search attributes on the namespace when they are missing, so a fresh
 * cluster needs no manual step (decisions §5). Safe to call from every process at start-up.
 */
export async function ensureSearchAttributes(connection: Connection, namespace: string): Promise<string[]> {
  const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
  const missing = CUSTOM_SEARCH_ATTRIBUTES.filter((name) => !(customAttributes && name in customAttributes));
  if (missing.length === 0) return [];
  const keyword = temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
  try {
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map((name) => [name, keyword])),
    });
  } catch (error) {
    // Another process registered them at the same moment: fine if they are there now.
    const again = await connection.operatorService.listSearchAttributes({ namespace });
    if (missing.some((name) => !(again.customAttributes && name in again.customAttributes))) throw error;
  }
  return missing;
}
