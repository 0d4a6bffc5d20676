import { PLATFORMS } from '../../domain/platforms';
import { DELIVERY_STATUSES, type DeliveryKind } from '../../domain/statuses';
import type { CustomerJson } from '../../purchases/customer-store';
import { orderLineKey } from '../../purchases/purchase-store';
import type { ProductListing } from '../../services/products';
import type { DeliveryJson } from '../../services/webhook-log';
import type { OutboxBacklog } from '../../services/workflow-outbox';
import { badge, dispatchBacklogBanner, emptyRow, when } from './components';
import { flag, html, type SafeHtml } from '../../templating/html';
import { page, type PageContext } from './layout';
import { isLive } from './products';
import { saleForm } from './sale-form';

/**
 * An entry of the log: an order, or a refund or dispute event (decisions §9). An entry without a
 * kind is an order.
 */
export type LogEntry = DeliveryJson & { kind?: DeliveryKind };

/** A refund or dispute entry says so beside its order id; orders, most of the log, carry no badge. */
function kindBadge(entry: LogEntry): SafeHtml {
  if (entry.kind === 'refund') return html` ${badge('refund', 'Refund')}`;
  if (entry.kind === 'dispute') return html` ${badge('dispute', 'Dispute')}`;
  return html``;
}

/** An order a reconciliation run found missed (its webhook never came) says so (decisions §15). */
function sourceBadge(entry: LogEntry): SafeHtml {
  return entry.source === 'reconciliation' ? html` ${badge('recovered', 'Recovered')}` : html``;
}

export interface WebhookLogView {
  entries: LogEntry[];
  status?: string;
  platform?: string;
  source?: string;
  /** Older entries follow (the page is full). */
  more: boolean;
  products: Map<string, ProductListing>;
  customers: CustomerJson[];
  /** Purchase id of each held order line already recorded, by `orderLineKey`. */
  recorded: Map<string, string>;
  /** Link to a workflow in the Temporal UI; null when no UI is known. */
  workflowUrl: (workflowId: string) => string | null;
  /** Fulfilments recorded and waiting for the workflow engine. */
  backlog: OutboxBacklog;
}

function workflowLinks(v: WebhookLogView, ids: string[]): SafeHtml {
  if (ids.length === 0) return html`<span class="muted">none</span>`;
  return html`<ul class="items">${ids.map((id) => {
    const url = v.workflowUrl(id);
    return html`<li>${url ? html`<a href="${url}" target="_blank" rel="noopener">Open in Temporal<span class="visually-hidden"> (workflow ${id})</span></a>` : html`<code>${id}</code>`}</li>`;
  })}</ul>`;
}

function itemLine(v: WebhookLogView, entry: LogEntry, item: DeliveryJson['items'][number], index: number): SafeHtml {
  const listing = item.productId ? v.products.get(item.productId) : undefined;
  const outcome = item.outcome ?? 'pending';
  let byHand: SafeHtml | string = '';
  if (item.outcome === 'held' && listing) {
    const recorded = v.recorded.get(orderLineKey({ source: entry.platform, externalOrderId: entry.externalOrderId, productId: listing.product.id }));
    if (recorded) {
      byHand = html`<p class="ok small">Recorded: <a href="/purchases/${recorded}">purchase ${recorded.slice(0, 8)}</a>.</p>`;
    } else if (isLive(listing)) {
      byHand = html`<details class="record-by-hand"><summary>Record this sale by hand</summary>
        ${saleForm({
          id: `hold-${entry.id}-${index}`,
          products: [],
          customers: v.customers,
          order: { source: entry.platform, externalOrderId: entry.externalOrderId, productId: listing.product.id, productName: listing.product.name },
          submitLabel: 'Record the sale',
        })}</details>`;
    } else {
      byHand = html`<p class="small muted">Once <a href="/products/${listing.product.id}">${listing.product.name}</a> is live,
        the sale can be recorded here by hand.</p>`;
    }
  }
  return html`<li data-sku="${item.sku ?? ''}">
    <code>${item.sku ?? '(no SKU)'}</code>
    ${listing ? html` → <a href="/products/${listing.product.id}">${listing.product.name}</a>` : ''}
    ${badge(outcome)}${item.reason ? html` <span class="small">${item.reason}</span>` : ''}
    ${item.purchaseId ? html` <a class="small" href="/purchases/${item.purchaseId}">purchase</a>` : ''}
    ${byHand}</li>`;
}

function filterQuery(v: WebhookLogView, extra: Record<string, string>): string {
  const q = new URLSearchParams();
  if (v.status) q.set('status', v.status);
  if (v.platform) q.set('platform', v.platform);
  if (v.source) q.set('source', v.source);
  for (const [k, value] of Object.entries(extra)) q.set(k, value);
  return q.toString();
}

export function webhookLogPage(ctx: PageContext, v: WebhookLogView): string {
  const last = v.entries[v.entries.length - 1];
  return page(ctx, {
    title: 'Webhook log',
    nav: 'webhooks',
    body: html`${dispatchBacklogBanner(v.backlog)}
<p class="muted small">Every order, refund and dispute notification your sales platforms sent, newest first, with what became of each line.</p>
<form method="get" action="/webhooks-log" hx-get="/webhooks-log" hx-target="#log" hx-select="#log" hx-swap="outerHTML" hx-push-url="true"
      hx-trigger="change, submit" class="row" aria-label="Filter the log">
  <div><label for="status">Status</label>
    <select id="status" name="status"><option value="">Any status</option>
      ${DELIVERY_STATUSES.map((s) => html`<option value="${s}"${flag(v.status === s, 'selected')}>${s}</option>`)}</select></div>
  <div><label for="platform">Platform</label>
    <select id="platform" name="platform"><option value="">Any platform</option>
      ${PLATFORMS.map((p) => html`<option value="${p}"${flag(v.platform === p, 'selected')}>${p}</option>`)}</select></div>
  <div><label for="source">Came by</label>
    <select id="source" name="source"><option value="">Webhook or recovered</option>
      <option value="webhook"${flag(v.source === 'webhook', 'selected')}>Webhook</option>
      <option value="reconciliation"${flag(v.source === 'reconciliation', 'selected')}>Recovered by reconciliation</option></select></div>
  <div><button type="submit">Filter</button></div>
</form>
<div id="log">
  <div class="table-wrap"><table>
    <caption class="visually-hidden">Webhook deliveries, newest first</caption>
    <thead><tr><th scope="col">Received</th><th scope="col">Platform and order</th><th scope="col">Status</th>
      <th scope="col">Items (SKU, outcome, reason)</th><th scope="col">Workflow</th></tr></thead>
    <tbody>${v.entries.length === 0 ? emptyRow(5, 'No deliveries match.') : v.entries.map((e) => html`<tr data-delivery-id="${e.id}" data-status="${e.status}" data-kind="${e.kind ?? 'order'}">
      <td>${when(e.receivedAt)}${e.completedAt ? html`<br><span class="small muted">done ${when(e.completedAt)}</span>` : ''}</td>
      <td>${e.platform}${kindBadge(e)}${sourceBadge(e)}<br><code>${e.externalOrderId}</code></td>
      <td>${badge(e.status)}${e.test ? html` ${badge('test')}` : ''}${e.unmatched ? html` ${badge('unmatched')}` : ''}</td>
      <td><ul class="items">${e.items.map((item, i) => itemLine(v, e, item, i))}</ul></td>
      <td>${workflowLinks(v, e.workflowIds)}</td></tr>`)}</tbody>
  </table></div>
  ${v.more && last ? html`<p><a href="/webhooks-log?${filterQuery(v, { after: last.id })}">Older entries</a></p>` : ''}
</div>`,
  });
}
