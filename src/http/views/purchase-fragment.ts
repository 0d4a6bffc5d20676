import { escapeHtml } from '../../mail/templates';

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
  const emailed = d.emailed ? `The link is being emailed to ${escapeHtml(d.customerEmail)}.` : 'No email was sent.';
  return `<div class="purchase-created" role="status" data-purchase-id="${escapeHtml(d.purchaseId)}" data-customer-id="${escapeHtml(d.customerId)}">` +
    `<p>Purchase recorded: ${escapeHtml(d.productName)} for ${escapeHtml(d.customerEmail)} (${escapeHtml(d.amount)} ${escapeHtml(d.currency)}).</p>` +
    `<p>Download link: <a href="${escapeHtml(d.link)}">${escapeHtml(d.link)}</a> (valid until ${escapeHtml(d.expiresAt.toISOString())}).</p>` +
    `<p>${emailed}</p></div>`;
}
