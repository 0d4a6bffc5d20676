import type { ProductListing } from '../../services/products';
import type { HeldSale, HeldSales } from '../../services/unmatched-replay';
import { badge, emptyRow, statusLine, when } from './components';
import { html, type SafeHtml } from '../../templating/html';
import { page, type PageContext } from './layout';
import { isLive } from './products';

/**
 * One unknown SKU (decisions §12, map-and-replay): the sales it held back, the product it maps to,
 * and for owners and admins the map form and "deliver these". Members see the same page without
 * the forms. The forms talk JSON to /api (app.js); the SKU travels URL-encoded (any characters).
 */

/** The page of an SKU: in the query string, so that no character of it (`/`, `.`, `%`) bends the path. */
export const unmatchedHref = (sku: string): string => `/unmatched?sku=${encodeURIComponent(sku)}`;

/** The API's path for an action on an SKU. */
const apiPath = (sku: string, action: 'map' | 'deliver'): string => `/api/unmatched-skus/${encodeURIComponent(sku)}/${action}`;

export interface UnmatchedView {
  held: HeldSales;
  /** The organisation's products: the map form offers them; the mapped one is named. */
  products: ProductListing[];
}

const amountOf = (s: HeldSale): SafeHtml | string =>
  s.amount === null ? html`<span class="muted">unknown</span>` : `${s.amount}${s.currency ? ` ${s.currency}` : ''}`;

function saleRows(held: HeldSales): SafeHtml | SafeHtml[] {
  if (held.sales.length === 0) return emptyRow(6, 'No sale is held back by this SKU now.');
  return held.sales.map((s) => html`<tr data-item-id="${s.itemId}">
    <td>${s.platform}</td>
    <td><code>${s.externalOrderId}</code>${s.sku.trim() === held.sku ? '' : html`<br><span class="small muted">sent as <code>${s.sku}</code></span>`}</td>
    <td>${when(s.receivedAt)}</td>
    <td>${s.customerEmail ?? html`<span class="muted">none</span>`}</td>
    <td class="num">${amountOf(s)}</td>
    <td>${s.deliverable
      ? badge('success', 'deliverable')
      : html`${badge('held', 'record by hand')}<br><a class="small" href="/webhooks-log?status=Error&amp;platform=${encodeURIComponent(s.platform)}">Webhook log</a>`}</td></tr>`);
}

function productPanel(ctx: PageContext, v: UnmatchedView, mapped: ProductListing | undefined): SafeHtml {
  const { held } = v;
  if (held.productId !== null) {
    const name = mapped ? html`<a href="/products/${mapped.product.id}">${mapped.product.name}</a>` : html`<span class="muted">another product</span>`;
    const live = mapped !== undefined && isLive(mapped);
    return html`<p data-testid="mapped-to">Maps to ${name} ${live ? badge('success', 'live') : badge('pending', 'not live')}.
    New sales with this SKU are delivered as that product.</p>
  ${live ? '' : html`<p class="warn">The product is not live (published, with a ready active version): its sales are held, so nothing can be delivered until it is.</p>`}`;
  }
  if (!ctx.isAdmin) return html`<p data-testid="mapped-to">Maps to no product yet. An owner or admin can map it to one.</p>`;
  if (v.products.length === 0) {
    return html`<p data-testid="mapped-to">Maps to no product yet.</p>
  <p class="warn">There is no product to map it to: <a href="/products">create the product</a> first.</p>`;
  }
  return html`<p data-testid="mapped-to">Maps to no product yet.</p>
  <form data-json action="${apiPath(held.sku, 'map')}" data-done="Mapped. Reloading…" class="stack">
    <label for="map-product">Product <span class="hint">The SKU becomes one of the product's extra SKUs: later sales with it are delivered at once.</span></label>
    <select id="map-product" name="productId" required>
      <option value="">Choose a product…</option>
      ${v.products.map((l) => html`<option value="${l.product.id}">${l.product.name} (${l.product.slug})${isLive(l) ? '' : ', not live'}</option>`)}
    </select>
    <button type="submit" class="primary">Map to product</button>
    ${statusLine()}
  </form>`;
}

function deliverControl(ctx: PageContext, held: HeldSales, mapped: ProductListing | undefined): SafeHtml {
  const deliverable = held.sales.filter((s) => s.deliverable).length;
  const byHand = held.sales.length - deliverable;
  const handNote = byHand === 0 ? html`` : html`<p class="small">${byHand === 1 ? '1 sale was' : `${byHand} sales were`} recorded before sales were kept for
    replay: record ${byHand === 1 ? 'it' : 'them'} by hand from the <a href="/webhooks-log?status=Error">Webhook log</a>.</p>`;
  if (!ctx.isAdmin || deliverable === 0) return handNote;
  if (held.productId === null) return html`<p class="muted">Map the SKU to a product to deliver these.</p>${handNote}`;
  if (mapped === undefined || !isLive(mapped)) return html`<p class="muted">Make the product live to deliver these.</p>${handNote}`;
  return html`<form data-json action="${apiPath(held.sku, 'deliver')}" class="stack"
      data-done="{delivering} {delivering:sale is|sales are} being delivered. Reloading…">
    <button type="submit" class="primary">Deliver these (${deliverable})</button>
    ${statusLine()}
  </form>
  ${handNote}`;
}

export function unmatchedPage(ctx: PageContext, v: UnmatchedView): string {
  const { held } = v;
  const mapped = held.productId === null ? undefined : v.products.find((l) => l.product.id === held.productId);
  return page(ctx, {
    title: 'Unmatched SKU',
    nav: 'purchases',
    body: html`
<p><a href="/purchases#unmatched">Back to Purchases</a></p>
<p class="lead">SKU <code data-testid="sku">${held.sku}</code> <span class="muted small">(matched ignoring case and surrounding spaces)</span></p>
<section class="panel" aria-labelledby="product-heading">
  <h2 id="product-heading">Product</h2>
  ${productPanel(ctx, v, mapped)}
</section>
<section class="panel" aria-labelledby="held-heading">
  <h2 id="held-heading">Held sales: <span data-testid="held-count">${held.sales.length}</span></h2>
  <p>Order lines with this SKU that were recorded but not delivered. <strong>Deliver these</strong> fulfils each one as if the
    platform had just sent it with a known SKU, through the same workflows and de-duplication keys: each buyer gets one receipt
    with their download link, once, whatever is clicked twice or redelivered meanwhile. Their Webhook log entries go back to
    Pending until their runs report.</p>
  <div class="table-wrap"><table data-testid="held-sales">
    <caption class="visually-hidden">Sales held back by this SKU, oldest first</caption>
    <thead><tr><th scope="col">Platform</th><th scope="col">Order</th><th scope="col">Received</th><th scope="col">Customer</th>
      <th scope="col" class="num">Amount</th><th scope="col">Delivery</th></tr></thead>
    <tbody>${saleRows(held)}</tbody>
  </table></div>
  ${deliverControl(ctx, held, mapped)}
</section>`,
  });
}
