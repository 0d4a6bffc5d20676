import type { CustomerJson } from '../../purchases/customer-store';
import type { ProductListing } from '../../services/products';
import { html, type SafeHtml } from '../../templating/html';

export interface SaleFormOptions {
  /** Unique per page: ids of the fields and of the result region derive from it. */
  id: string;
  /** Live products to choose from (ignored when `productId` is fixed). */
  products: ProductListing[];
  customers: CustomerJson[];
  /** A platform order recorded by hand (decisions §3): fixed product, source and order id. */
  order?: { source: string; externalOrderId: string; productId: string; productName: string };
  submitLabel: string;
}

/**
 * A sale form posted by htmx to POST /api/purchases (the same endpoint as the API; a session makes
 * its source `manual`, or the platform's for a held order) and swapping in the returned fragment,
 * success or error, right below it.
 */
export function saleForm(o: SaleFormOptions): SafeHtml {
  const f = (name: string) => `${o.id}-${name}`;
  const product = o.order
    ? html`<input type="hidden" name="productId" value="${o.order.productId}">
      <input type="hidden" name="source" value="${o.order.source}">
      <input type="hidden" name="externalOrderId" value="${o.order.externalOrderId}">
      <p>Product: <strong>${o.order.productName}</strong>; ${o.order.source} order <code>${o.order.externalOrderId}</code>.</p>`
    : html`<label for="${f('product')}">Product</label>
      <select id="${f('product')}" name="productId" required>
        ${o.products.map((l) => html`<option value="${l.product.id}">${l.product.name} (${l.activeVersion?.version ?? ''})</option>`)}
      </select>`;
  return html`<form hx-post="/api/purchases" hx-target="#${f('result')}" hx-swap="innerHTML" hx-disabled-elt="find button"
      data-refresh="purchase-list-refresher" class="stack" id="${o.id}">
    ${product}
    <label for="${f('customer')}">Customer</label>
    <select id="${f('customer')}" name="customerId" data-toggles="${f('new-customer')}">
      <option value="new" selected>New customer</option>
      ${o.customers.map((c) => html`<option value="${c.id}">${c.email}${c.name ? ` (${c.name})` : ''}</option>`)}
    </select>
    <fieldset id="${f('new-customer')}">
      <legend>New customer</legend>
      <label for="${f('email')}">Customer email</label>
      <input id="${f('email')}" name="newCustomer.email" type="email" autocomplete="off">
      <label for="${f('name')}">Customer name</label>
      <input id="${f('name')}" name="newCustomer.name" autocomplete="off">
    </fieldset>
    <div class="row">
      <div><label for="${f('amount')}">Amount <span class="hint">In whole units, e.g. 19.99</span></label>
        <input id="${f('amount')}" name="amount" inputmode="decimal" required></div>
      <div><label for="${f('currency')}">Currency</label>
        <input id="${f('currency')}" name="currency" value="USD" maxlength="3" required></div>
      <div><label for="${f('method')}">Payment method</label>
        <input id="${f('method')}" name="paymentMethod" value="custom"></div>
    </div>
    <label class="check"><input type="checkbox" name="sendEmail" value="true" checked> Email the download link to the customer</label>
    <button type="submit" class="primary">${o.submitLabel}</button>
  </form>
  <div id="${f('result')}" aria-live="polite"></div>`;
}
