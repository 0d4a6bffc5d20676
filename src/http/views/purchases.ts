import type { PurchaseRow } from '../../purchases/purchase-store';
import type { CustomerRow } from '../../purchases/customer-store';
import type { CustomerJson } from '../../purchases/customer-store';
import type { ProductListing } from '../../services/products';
import type { UnmatchedSkusJson } from '../../services/webhook-log';
import { badge, emptyRow, when } from './components';
import { html, type SafeHtml } from '../../templating/html';
import { csrfField, page, type PageContext } from './layout';
import { saleForm } from './sale-form';
import { unmatchedHref } from './unmatched';

const RECEIPT_LABEL: Record<PurchaseRow['receiptStatus'], string> = {
  pending: 'pending', sent: 'sent', failed: 'failed', skipped: 'not emailed',
};

/**
 * The purchase table alone: what the search and a new sale swap in. It carries no hx-* attributes
 * itself (its refresher sits beside it), so the forms inside it inherit none.
 */
export function purchaseList(ctx: PageContext, rows: PurchaseRow[], q: string, limit: number): SafeHtml {
  return html`<div id="purchase-list">
  <p class="muted small" role="status">${rows.length === 0 ? 'No purchases' : `${rows.length}${rows.length === limit ? '+' : ''} purchase${rows.length === 1 ? '' : 's'}`}${q ? html` matching <strong>${q}</strong>` : ''}${rows.length === limit ? `, newest ${limit} shown` : ''}.</p>
  <div class="table-wrap"><table>
    <caption class="visually-hidden">Purchases, newest first</caption>
    <thead><tr><th scope="col">Date</th><th scope="col">Customer</th><th scope="col">Product</th><th scope="col" class="num">Amount</th>
      <th scope="col">Source</th><th scope="col">Receipt</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
    <tbody>${rows.length === 0 ? emptyRow(7, q ? 'Nothing matches.' : 'No purchases yet.') : rows.map((p) => html`<tr data-purchase-id="${p.id}">
      <td>${when(p.createdAt)}${p.revokedAt === null ? '' : html`<br>${badge('revoked', 'revoked')}`}</td>
      <td>${p.customerEmail}${p.customerName ? html`<br><span class="muted small">${p.customerName}</span>` : ''}</td>
      <td><a href="/products/${p.productId}">${p.productName}</a></td>
      <td class="num">${p.amount} ${p.currency}</td>
      <td>${badge('pending', p.source)}${p.test ? html` ${badge('test')}` : ''}${p.externalOrderId ? html`<br><span class="small">order <code>${p.externalOrderId}</code></span>` : ''}</td>
      <td>${badge(p.receiptStatus === 'skipped' ? 'skipped' : p.receiptStatus, RECEIPT_LABEL[p.receiptStatus])}${p.receiptSentAt ? html`<br><span class="small">${when(p.receiptSentAt)}</span>` : ''}</td>
      <td><a href="/purchases/${p.id}">Details<span class="visually-hidden"> of the purchase by ${p.customerEmail}</span></a>
        ${p.revokedAt !== null ? html`<p class="small muted">Access withdrawn: no links are sent.</p>` : html`<form hx-post="/purchases/${p.id}/resend" hx-target="#resend-${p.id}" hx-disabled-elt="find button">
        ${csrfField(ctx)}<button type="submit" aria-describedby="resend-${p.id}">Resend link</button></form>
        <div id="resend-${p.id}" aria-live="polite" class="small"></div>`}</td></tr>`)}</tbody>
  </table></div>
</div>`;
}

/** The unmatched-SKU counter: each SKU links to its page (held sales; map and deliver for owners and admins). */
export function unmatchedPanel(ctx: PageContext, unmatched: UnmatchedSkusJson): SafeHtml {
  return html`<section class="panel" id="unmatched" aria-labelledby="unmatched-heading">
  <h2 id="unmatched-heading">Unmatched SKUs: <span data-testid="unmatched-total">${unmatched.total}</span></h2>
  ${unmatched.total === 0 ? html`<p class="muted">Every SKU your platforms sent maps to a product.</p>` : html`
  <p>Order lines whose SKU maps to no product are held back. ${ctx.isAdmin
    ? 'Open an SKU to map it to a product and deliver the sales it held.'
    : 'Open an SKU to see the sales it held; an owner or admin can map it to a product and deliver them.'}
    Lines that carried no SKU are recorded by hand from the <a href="/webhooks-log?status=Error">Webhook log</a>.</p>
  <div class="table-wrap"><table>
    <thead><tr><th scope="col">Platform</th><th scope="col">SKU</th><th scope="col" class="num">Lines</th><th scope="col">Last seen</th>
      <th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
    <tbody>${unmatched.skus.map((s) => html`<tr data-sku="${s.sku}">
      <td>${s.platform}</td><td><code>${s.sku || '(none)'}</code></td><td class="num">${s.count}</td><td>${when(s.lastSeenAt)}</td>
      <td>${s.sku.trim() === ''
        ? html`<span class="small muted">record by hand</span>`
        : html`<a href="${unmatchedHref(s.sku)}">${ctx.isAdmin ? 'Map and deliver' : 'Held sales'}<span class="visually-hidden"> of SKU ${s.sku}</span></a>`}</td></tr>`)}</tbody>
  </table></div>`}
</section>`;
}

export interface PurchasesView {
  rows: PurchaseRow[];
  q: string;
  limit: number;
  unmatched: UnmatchedSkusJson;
  liveProducts: ProductListing[];
  customers: CustomerJson[];
}

export function purchasesPage(ctx: PageContext, v: PurchasesView): string {
  return page(ctx, {
    title: 'Purchases',
    nav: 'purchases',
    body: html`
${unmatchedPanel(ctx, v.unmatched)}
<section class="panel" aria-labelledby="manual-heading">
  <h2 id="manual-heading">Create Manual Purchase</h2>
  ${v.liveProducts.length === 0
    ? html`<p class="warn">No product is live yet. <a href="/products">Publish a product with an active version</a> first.</p>`
    : saleForm({ id: 'manual-purchase', products: v.liveProducts, customers: v.customers, submitLabel: 'Create purchase' })}
</section>
<section aria-labelledby="list-heading">
  <h2 id="list-heading">All purchases</h2>
  <form role="search" method="get" action="/purchases" hx-get="/purchases" hx-target="#purchase-list" hx-select="#purchase-list"
        hx-swap="outerHTML" hx-push-url="true" class="row">
    <div><label for="q">Search by email or order id</label>
      <input id="q" name="q" type="search" value="${v.q}"></div>
    <div><button type="submit">Search</button></div>
  </form>
  <div id="purchase-list-refresher" hidden hx-get="/purchases" hx-include="#q" hx-trigger="refresh" hx-target="#purchase-list"
       hx-select="#purchase-list" hx-swap="outerHTML"></div>
  ${purchaseList(ctx, v.rows, v.q, v.limit)}
</section>`,
  });
}

export function customersPage(ctx: PageContext, rows: CustomerRow[], q: string, limit: number): string {
  return page(ctx, {
    title: 'Customers',
    nav: 'customers',
    body: html`
<form role="search" method="get" action="/customers" hx-get="/customers" hx-target="#customer-list" hx-select="#customer-list"
      hx-swap="outerHTML" hx-push-url="true" class="row">
  <div><label for="q">Search by email or name</label><input id="q" name="q" type="search" value="${q}"></div>
  <div><button type="submit">Search</button></div>
</form>
<div id="customer-list">
  <p class="muted small" role="status">${rows.length}${rows.length === limit ? '+' : ''} customer${rows.length === 1 ? '' : 's'}${q ? html` matching <strong>${q}</strong>` : ''}.</p>
  <div class="table-wrap"><table>
    <caption class="visually-hidden">Customers, newest first</caption>
    <thead><tr><th scope="col">Email</th><th scope="col">Name</th><th scope="col" class="num">Purchases</th><th scope="col">Last purchase</th><th scope="col">Customer since</th></tr></thead>
    <tbody>${rows.length === 0 ? emptyRow(5, q ? 'Nothing matches.' : 'No customers yet: they appear with their first purchase.') : rows.map((c) => html`<tr data-customer-id="${c.id}">
      <td><a href="/purchases?q=${encodeURIComponent(c.email)}">${c.email}</a></td>
      <td>${c.name}</td><td class="num">${c.purchases}</td><td>${when(c.lastPurchaseAt)}</td><td>${when(c.createdAt)}</td></tr>`)}</tbody>
  </table></div>
</div>`,
  });
}
