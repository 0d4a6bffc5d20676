/**
 * plugin-b's order list (WooCommerce REST `GET /wp-json/wc/v3/orders`, decisions §15), beside its
 * webhook adapter. Its API is the shop's own WordPress site, so there is no default origin.
 *
 * - Auth: HTTP Basic with the REST API key, consumer key as user and consumer secret as password (the
 *   documented way over HTTPS; a read-only key is enough to list orders).
 * - Since: `modified_after` with `dates_are_gmt=true`. WordPress compares it strictly ("after") on
 *   whole seconds, so the request asks for one second earlier to include orders changed at `since`.
 * - Pages: numbered, `page` and `per_page` (at most 100); the answer's `X-WP-TotalPages` says how many
 *   there are (else its `Link: <…>; rel="next"`). Sorted by modification time ascending so that the
 *   high-water mark follows the pages read.
 * - WooCommerce itself sets no rate limit, but hosts and security plugins answer 429 with
 *   `Retry-After`, which is honoured.
 *
 * The answer is a bare JSON array of the same order resources the order webhook carries, each mapped
 * by the adapter's own `pluginBOrder`; `date_modified_gmt` (UTC without an offset) is its change time.
 */
import { z } from 'zod';
import { text } from './fields';
import { getJson, listedOrder, nextLink, notAPage, OrderListError, type OrderListClient, type OrderListPage } from './order-list';
import { pluginBOrder } from './plugin-b';

export const PLUGIN_B_API_PATH = '/wp-json/wc/v3';
const PAGE_SIZE = 50;

const CredentialsSchema = z.object({
  consumerKey: z.string().trim().min(4).max(200).regex(/^ck_\w+$/, 'a REST API consumer key, starting ck_')
    .describe('plugin-b: the REST API key\'s consumer key (ck_…), of a key with Read permission'),
  consumerSecret: z.string().trim().min(4).max(200).regex(/^cs_\w+$/, 'a REST API consumer secret, starting cs_')
    .describe('plugin-b: the REST API key\'s consumer secret (cs_…)'),
});
export type PluginBCredentials = z.infer<typeof CredentialsSchema>;

/** `date_modified_gmt` is UTC written without an offset ("2026-01-01T10:10:05"). */
export function gmtTime(value: unknown): string | null {
  const time = text(value);
  if (time === null) return null;
  const at = Date.parse(/(Z|[+-]\d{2}:?\d{2})$/i.test(time) ? time : `${time}Z`);
  return Number.isNaN(at) ? null : new Date(at).toISOString();
}

/** An ISO time as WordPress reads a GMT date: whole seconds, no offset, one second earlier (its "after" is strict). */
function modifiedAfter(since: string): string {
  return new Date(Math.floor(Date.parse(since) / 1000) * 1000 - 1000).toISOString().slice(0, 19);
}

function hasNextPage(page: number, totalPages: string | string[] | undefined, link: string | string[] | undefined): boolean {
  const total = Number(Array.isArray(totalPages) ? totalPages[0] : totalPages);
  return totalPages !== undefined && Number.isSafeInteger(total) ? page < total : nextLink(link) !== null;
}

export const pluginBOrders: OrderListClient<PluginBCredentials> = {
  platform: 'plugin-b',
  credentials: CredentialsSchema,
  scope: 'a REST API key with Read permission (WooCommerce › Settings › Advanced › REST API)',
  credentialFields: [
    { field: 'consumerKey', label: 'Consumer key (ck_…, Read permission)', secret: false },
    { field: 'consumerSecret', label: 'Consumer secret (cs_…)', secret: true },
  ],
  defaultOrigin: () => null,

  async fetchPage({ origin, credentials, since, cursor, allowPrivate }): Promise<OrderListPage> {
    const page = cursor === null ? 1 : Number(cursor);
    if (!Number.isSafeInteger(page) || page < 1) throw new OrderListError(`not a page number: ${cursor}`);
    const url = new URL(`${PLUGIN_B_API_PATH}/orders`, origin);
    url.searchParams.set('modified_after', modifiedAfter(since));
    url.searchParams.set('dates_are_gmt', 'true');
    url.searchParams.set('orderby', 'modified');
    url.searchParams.set('order', 'asc');
    url.searchParams.set('per_page', String(PAGE_SIZE));
    url.searchParams.set('page', String(page));
    const basic = Buffer.from(`${credentials.consumerKey}:${credentials.consumerSecret}`).toString('base64');
    const answer = await getJson(url, { authorization: `Basic ${basic}` }, allowPrivate);
    if (answer.status !== 200) return notAPage(answer, new Date());
    if (!Array.isArray(answer.body)) throw new OrderListError('the order list is not a JSON array');
    return {
      kind: 'page',
      orders: answer.body.map((order, index) => listedOrder(order, `[${index}]`, pluginBOrder, (o) => gmtTime(o.date_modified_gmt))),
      nextCursor: hasNextPage(page, answer.headers['x-wp-totalpages'], answer.headers.link) ? String(page + 1) : null,
      slowDownMs: 0,
    };
  },
};
