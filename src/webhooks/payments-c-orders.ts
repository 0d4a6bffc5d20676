/**
 * payments-c's order list (`GET /v1/checkout/sessions`, decisions §15), beside its webhook adapter.
 * Auth: the secret (or restricted) key as `Authorization: Bearer`. `created[gte]` (unix seconds)
 * keeps the sessions created since; `limit` per page, newest first; while `has_more`, the next page
 * is `starting_after` the page's last session id, beside the same filter. `expand[]=data.line_items`
 * brings each session's line items, which the events lack, for sessions whose metadata names no SKU.
 * A 429's `Retry-After` is honoured when sent. Each session is mapped by the adapter's own
 * `paymentsCSessionOrder`; the organisation is the integration's own (the key is the seller's), so a
 * session's `metadata.org_id` routes nothing here.
 */
import { z } from 'zod';
import { isObject, requireArray, text, type JsonObject } from './fields';
import { getJson, listedOrder, notAPage, OrderListError, type OrderListClient, type OrderListPage } from './order-list';
import { paymentsCSessionOrder } from './payments-c';

/** Of the platform's 1 to 100: expanded line items make each session heavier. */
const PAGE_SIZE = 50;

const CredentialsSchema = z.object({
  secretKey: z.string().trim().min(1).max(500).regex(/^(sk|rk)_(live|test)_\w+$/, 'a secret or restricted key, sk_… or rk_…')
    .describe('payments-c: a restricted key (rk_live_…) with Checkout Sessions: Read only'),
});
export type PaymentsCCredentials = z.infer<typeof CredentialsSchema>;

/** `created` (unix seconds) as ISO time, or null: sessions carry no modification time, and `created[gte]` filters by creation. */
function createdAt(session: JsonObject): string | null {
  const created = session.created;
  return typeof created === 'number' && Number.isSafeInteger(created) ? new Date(created * 1000).toISOString() : null;
}

export const paymentsCOrders: OrderListClient<PaymentsCCredentials> = {
  platform: 'payments-c',
  credentials: CredentialsSchema,
  scope: 'Checkout Sessions: Read',
  credentialFields: [{ field: 'secretKey', label: 'Restricted key (rk_…, Checkout Sessions: Read only)', secret: true }],
  defaultOrigin: () => 'https://api.stripe.com',

  async fetchPage({ origin, credentials, since, cursor, allowPrivate }): Promise<OrderListPage> {
    const url = new URL('/v1/checkout/sessions', origin);
    url.searchParams.set('created[gte]', String(Math.floor(Date.parse(since) / 1000)));
    url.searchParams.set('limit', String(PAGE_SIZE));
    url.searchParams.append('expand[]', 'data.line_items');
    if (cursor !== null) url.searchParams.set('starting_after', cursor);
    const answer = await getJson(url, { authorization: `Bearer ${credentials.secretKey}` }, allowPrivate);
    if (answer.status !== 200) return notAPage(answer, new Date());
    if (!isObject(answer.body) || answer.body.object !== 'list') throw new OrderListError('the session list is not a list object');
    let sessions: unknown[];
    try {
      sessions = requireArray(answer.body.data, 'data');
    } catch {
      throw new OrderListError('the session list has no data array');
    }
    const last = sessions.length > 0 ? sessions[sessions.length - 1] : undefined;
    const nextCursor = answer.body.has_more === true && isObject(last) ? text(last.id) : null;
    return { kind: 'page', orders: sessions.map((session, i) => listedOrder(session, `data[${i}]`, (o) => paymentsCSessionOrder(o, `data[${i}]`), createdAt)), nextCursor, slowDownMs: 0 };
  },
};
