import { html } from '../../templating/html';

export interface PurchaseFragmentData {
  purchaseId: string;
  customerId: string;
  customerEmail: string;
  productName: string;
  amount: string;
  currency: string;
  link: string;
  expiresAt: Date;
  emailed: boolean;
}

/** The 201 answer of POST /api/purchases: htmx swaps it into the dashboard as is. */
export function purchaseFragment(d: PurchaseFragmentData): string {
  return html`<div class="purchase-created" role="status" data-purchase-id="${d.purchaseId}" data-customer-id="${d.customerId}">
<p>Purchase recorded: ${d.productName} for ${d.customerEmail} (${d.amount} ${d.currency}).</p>
<p>Download link: <a href="${d.link}">${d.link}</a> (valid until ${d.expiresAt.toISOString()}).</p>
<p>${d.emailed ? `The link is being emailed to ${d.customerEmail}.` : 'No email was sent.'}</p></div>`.toString();
}
