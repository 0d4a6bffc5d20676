import { accessLabel, LINK_ORIGIN_LABELS, type EvidenceRecord } from '../../domain/evidence';
import type { RevokeReason } from '../../domain/statuses';
import type { PurchaseRow } from '../../purchases/purchase-store';
import { limitReached } from '../../domain/download-links';
import type { PurchaseLicenseState } from '../../licenses/license-activations';
import type { PurchaseAllowance, PurchaseDetail, PurchaseReminder } from '../../services/purchase-detail';
import { badge, bytes, emptyRow, statusLine, when } from './components';
import { html, type SafeHtml } from '../../templating/html';
import { page, type PageContext } from './layout';

/**
 * One purchase (decisions §9–§11, §14): what was bought, by whom, its receipt and access, its download
 * limit, its license key and installations, the links issued, every page open and file transfer, and what staff did to it. Owners and
 * admins also get the actions (revoke or restore, re-arm, the limit override) and the evidence
 * record; members see the same page without them. The forms talk JSON to /api (app.js).
 */

const RECEIPT_LABEL: Record<PurchaseRow['receiptStatus'], string> = {
  pending: 'pending', sent: 'sent', failed: 'failed', skipped: 'not emailed',
};


const STAFF_ACTION: Record<string, string> = {
  revoke: 'Access withdrawn', restore: 'Access restored', rearm: 'Re-armed', resend: 'Link resent', download_limit: 'Download limit changed',
};

const REASON: Record<RevokeReason, string> = { refund: 'refund', chargeback: 'chargeback', manual: 'manual' };

const reasonOf = (reason: string | null): string => (reason !== null && reason in REASON ? REASON[reason as RevokeReason] : reason ?? 'unknown');

const transfers = (n: number): string => `${n} completed file transfer${n === 1 ? '' : 's'}`;

function accessNotice(p: PurchaseRow, ctx: PageContext): SafeHtml {
  if (p.revokedAt === null) return html``;
  return html`<div class="error" role="status" data-testid="access-withdrawn">
  <p><strong>Access withdrawn (${reasonOf(p.revokeReason)}) on ${when(p.revokedAt)}.</strong></p>
  <p>The buyer's links and file URLs answer "access withdrawn", and /my leaves this purchase out.${ctx.isAdmin ? ' Restore access below to give it back.' : ''}</p>
</div>`;
}

function reminderLine(reminder: PurchaseReminder): SafeHtml {
  switch (reminder.state) {
    case 'sent': return html`<dt>Reminder</dt><dd data-testid="reminder">Reminder sent ${when(reminder.at)}</dd>`;
    case 'refused': return html`<dt>Reminder</dt><dd data-testid="reminder">${badge('failed', 'refused by the mail server')}</dd>`;
    case 'due': return html`<dt>Reminder</dt><dd data-testid="reminder">Reminder due ${when(reminder.at)} <span class="muted small">(unless the buyer downloads first)</span></dd>`;
    case 'none': return html``;
  }
}

function summary(p: PurchaseRow, evidence: EvidenceRecord, reminder: PurchaseReminder): SafeHtml {
  return html`<dl class="panel" aria-label="Purchase">
  <dt>Product</dt><dd><a href="/products/${p.productId}">${p.productName}</a>${evidence.purchase.version ? html` <span class="muted">version ${evidence.purchase.version}</span>` : ''}</dd>
  <dt>Customer</dt><dd>${p.customerName ? html`${p.customerName} · ` : ''}<a href="/purchases?q=${encodeURIComponent(p.customerEmail)}">${p.customerEmail}</a></dd>
  <dt>Amount</dt><dd>${p.amount} ${p.currency} <span class="muted small">(${p.paymentMethod})</span></dd>
  <dt>Source</dt><dd>${badge('pending', p.source)}${p.test ? html` ${badge('test')}` : ''}${p.externalOrderId ? html` order <code>${p.externalOrderId}</code>` : ''}</dd>
  <dt>Created</dt><dd>${when(p.createdAt)}</dd>
  <dt>Receipt</dt><dd>${badge(p.receiptStatus, RECEIPT_LABEL[p.receiptStatus])}${p.receiptSentAt ? html` ${when(p.receiptSentAt)}` : ''}</dd>
  ${reminderLine(reminder)}
  <dt>Access</dt><dd data-testid="access-status">${p.revokedAt === null
    ? badge('success', 'active')
    : html`${badge('revoked', `withdrawn (${reasonOf(p.revokeReason)})`)} since ${when(p.revokedAt)}`}</dd>
  <dt>Purchase id</dt><dd><code>${p.id}</code></dd>
</dl>`;
}

function actionsPanel(ctx: PageContext, p: PurchaseRow): SafeHtml {
  if (!ctx.isAdmin) return html``;
  const revokeOrRestore = p.revokedAt === null
    ? html`<form data-json action="/api/purchases/${p.id}/revoke" data-done="Access withdrawn. Reloading…"
        data-confirm="Withdraw access to this purchase? The buyer's links and file URLs stop working until access is restored.">
    <p>Stops the buyer's links and file URLs at once (the reason recorded is "manual"). Nothing is deleted; restoring gives access back.</p>
    <button type="submit" class="danger">Revoke access</button>
    ${statusLine()}
  </form>`
    : html`<form data-json action="/api/purchases/${p.id}/restore" data-done="Access restored. Reloading…">
    <p>The buyer's links that are neither expired nor used work again.</p>
    <button type="submit" class="primary">Restore access</button>
    ${statusLine()}
  </form>`;
  const rearm = p.revokedAt === null
    ? html`<form data-json action="/api/purchases/${p.id}/rearm" data-show="linkSentTo" data-show-in="rearm-sent-to"
        data-done="Re-armed: the download count starts again and the earlier links no longer work."
        data-confirm="Re-arm this purchase? The download count starts again, every open link stops working, and a fresh link is emailed to ${p.customerEmail}.">
    <p>Starts the download count again, stops every open link and emails a fresh one to <strong>${p.customerEmail}</strong>.</p>
    <button type="submit">Re-arm and email a fresh link</button>
    ${statusLine()}
  </form>
  <div aria-live="polite"><p class="ok" hidden data-testid="rearm-sent">A fresh link is on its way to <strong id="rearm-sent-to"></strong>.</p></div>`
    : html`<p class="muted">Re-arm is available once access is restored.</p>`;
  return html`<section class="panel" aria-labelledby="actions-heading">
  <h2 id="actions-heading">Access</h2>
  ${revokeOrRestore}
  <h3>Re-arm</h3>
  ${rearm}
</section>`;
}

function allowancePanel(ctx: PageContext, p: PurchaseRow, a: PurchaseAllowance): SafeHtml {
  const reached = limitReached({ allowed: a.effective, used: a.used });
  const limitText = a.effective === null ? 'unlimited' : `${transfers(a.effective)} per purchase`;
  const whose = a.override !== null
    ? html`this purchase's own limit; the product's is ${a.product === null ? 'unlimited' : String(a.product)}`
    : html`the product's limit`;
  return html`<section class="panel" aria-labelledby="limit-heading">
  <h2 id="limit-heading">Download limit</h2>
  <dl class="facts" aria-label="Download limit">
    <dt>Limit</dt><dd data-testid="download-limit">${limitText} <span class="muted small">(${whose})</span></dd>
    <dt>Used</dt><dd data-testid="downloads-used">${transfers(a.used)} since ${a.countedFrom === null ? 'the purchase' : html`the last re-arm, ${when(a.countedFrom)}`}${reached ? html` ${badge('held', 'limit reached')}` : ''}</dd>
  </dl>
  ${reached ? html`<p class="warn">The limit is reached: the buyer's file URLs answer "download limit reached" until the purchase is re-armed or its limit raised.</p>` : ''}
  ${ctx.isAdmin ? html`<form data-json data-method="PUT" action="/api/purchases/${p.id}/download-limit" data-done="Saved. Reloading…" class="stack">
    <label for="purchase-download-limit">Limit for this purchase <span class="hint">Completed file transfers allowed; leave it empty to use the product's limit (${a.product === null ? 'unlimited' : String(a.product)}).</span></label>
    <input id="purchase-download-limit" class="short" name="downloadLimit" type="number" min="1" max="1000000" step="1" inputmode="numeric" value="${a.override ?? ''}">
    <button type="submit">Save limit</button>
    ${statusLine()}
  </form>` : ''}
</section>`;
}

/** The key, its seats and the installations that take them; owners and admins may free a seat. */
function licenseSection(ctx: PageContext, p: PurchaseRow, state: PurchaseLicenseState): SafeHtml {
  if (state.kind === 'none') return html``;
  if (state.kind === 'waiting') {
    return html`<section class="panel" aria-labelledby="license-heading" data-testid="license">
  <h2 id="license-heading">License key</h2>
  <p class="warn" data-testid="license-waiting">Waiting for a license key: the product's pool is empty. Upload keys on <a href="/products/${p.productId}">the product's page</a>; the receipt goes out with the key.</p>
</section>`;
  }
  const { license } = state;
  const active = license.activations.filter((a) => a.deactivatedAt === null);
  const seats = license.activationLimit === null ? `${active.length} (unlimited)` : `${active.length} of ${license.activationLimit}`;
  return html`<section class="panel" aria-labelledby="license-heading" data-testid="license">
  <h2 id="license-heading">License key</h2>
  <dl class="facts" aria-label="License key">
    <dt>Key</dt><dd><code id="license-key" data-testid="license-key">${license.key}</code> <button type="button" data-copy="license-key">Copy</button></dd>
    <dt>Status</dt><dd data-testid="license-status">${license.status === 'active' ? badge('success', 'active') : badge('revoked', 'revoked')}</dd>
    <dt>Activations</dt><dd data-testid="license-seats">${seats}</dd>
  </dl>
  <div class="table-wrap"><table data-testid="license-activations">
    <thead><tr><th scope="col">Name</th><th scope="col">Instance id</th><th scope="col">Activated</th>${ctx.isAdmin ? html`<th scope="col"><span class="visually-hidden">Actions</span></th>` : ''}</tr></thead>
    <tbody>${active.length === 0 ? emptyRow(ctx.isAdmin ? 4 : 3, 'Not activated on any installation.') : active.map((a) => html`<tr>
      <td>${a.instanceName}</td><td><code>${a.instanceId}</code></td><td>${when(a.activatedAt)}</td>
      ${ctx.isAdmin ? html`<td><form data-json data-method="DELETE" action="/api/purchases/${p.id}/license/activations/${a.instanceId}"
          data-confirm="Deactivate ${a.instanceName}? The app on it stops validating, and its seat is free for another installation."
          data-done="Deactivated. Reloading…">
        <button type="submit" class="danger">Deactivate</button>${statusLine()}</form></td>` : ''}</tr>`)}</tbody>
  </table></div>
</section>`;
}

function linkState(link: EvidenceRecord['links'][number], now: string): SafeHtml {
  if (link.usedAt !== null) return badge('sent', 'used');
  return new Date(link.expiresAt).getTime() <= new Date(now).getTime() ? badge('pending', 'expired') : badge('success', 'open');
}

function linksSection(e: EvidenceRecord): SafeHtml {
  return html`<section aria-labelledby="links-heading">
  <h2 id="links-heading">Links issued</h2>
  <div class="table-wrap"><table data-testid="links">
    <thead><tr><th scope="col">Issued</th><th scope="col">How</th><th scope="col">Expires</th><th scope="col">Used</th><th scope="col">State</th></tr></thead>
    <tbody>${e.links.length === 0 ? emptyRow(5, 'No link issued yet.') : e.links.map((l) => html`<tr>
      <td>${when(l.issuedAt)}</td><td>${LINK_ORIGIN_LABELS[l.via] ?? l.via}</td><td>${when(l.expiresAt)}</td>
      <td>${l.usedAt === null ? html`<span class="muted">not used</span>` : when(l.usedAt)}</td><td>${linkState(l, e.generatedAt)}</td></tr>`)}</tbody>
  </table></div>
</section>`;
}

/** `showIps`: owners and admins only (members get the record without addresses, and no column for them). */
function accessesSection(e: EvidenceRecord, showIps: boolean): SafeHtml {
  const shown = [...e.accesses].reverse();
  return html`<section aria-labelledby="accesses-heading">
  <h2 id="accesses-heading">Downloads and page opens</h2>
  ${e.accesses.length === 0 ? '' : html`<p class="muted small">${e.accessesNotListed > 0
    ? `The newest ${shown.length} of ${shown.length + e.accessesNotListed}, newest first.`
    : 'Newest first.'}</p>`}
  <div class="table-wrap"><table data-testid="accesses">
    <thead><tr><th scope="col">When</th><th scope="col">What</th><th scope="col">File</th><th scope="col" class="num">Bytes</th>
      ${showIps ? html`<th scope="col">IP</th>` : ''}<th scope="col">Browser</th></tr></thead>
    <tbody>${shown.length === 0 ? emptyRow(showIps ? 6 : 5, 'The buyer has not opened a link yet.') : shown.map((a) => html`<tr>
      <td>${when(a.at)}</td><td>${accessLabel(a)}</td><td>${a.file ?? html`<span class="muted">—</span>`}</td>
      <td class="num">${a.bytes === null ? '' : html`<span title="${String(a.bytes)} bytes">${bytes(a.bytes)}</span>`}</td>
      ${showIps ? html`<td>${a.ip ? html`<code>${a.ip}</code>` : ''}</td>` : ''}<td class="small">${a.userAgent ?? ''}</td></tr>`)}</tbody>
  </table></div>
</section>`;
}

function staffSection(e: EvidenceRecord): SafeHtml {
  return html`<section aria-labelledby="staff-heading">
  <h2 id="staff-heading">Staff actions</h2>
  <div class="table-wrap"><table data-testid="staff-actions">
    <thead><tr><th scope="col">When</th><th scope="col">Action</th><th scope="col">By</th><th scope="col">Detail</th></tr></thead>
    <tbody>${e.staffActions.length === 0 ? emptyRow(4, 'No staff action yet.') : [...e.staffActions].reverse().map((s) => html`<tr>
      <td>${when(s.at)}</td><td>${STAFF_ACTION[s.action] ?? s.action}</td><td>${s.by ?? html`<span class="muted">unknown</span>`}</td><td>${s.detail ?? ''}</td></tr>`)}</tbody>
  </table></div>
</section>`;
}

function ordersSection(e: EvidenceRecord): SafeHtml {
  if (e.order.deliveries.length === 0) return html``;
  return html`<section aria-labelledby="deliveries-heading">
  <h2 id="deliveries-heading">Platform notifications</h2>
  <div class="table-wrap"><table>
    <thead><tr><th scope="col">Received</th><th scope="col">Kind</th><th scope="col">Status</th><th scope="col">Items (SKU, outcome, reason)</th></tr></thead>
    <tbody>${e.order.deliveries.map((d) => html`<tr>
      <td>${when(d.receivedAt)}</td><td>${badge(d.kind === 'order' ? 'pending' : d.kind, d.kind)}</td><td>${badge(d.status)}</td>
      <td><ul class="items">${d.items.map((i) => html`<li><code>${i.sku ?? '(whole order)'}</code> ${badge(i.outcome ?? 'pending')}${i.reason ? html` <span class="small">${i.reason}</span>` : ''}</li>`)}</ul></td></tr>`)}</tbody>
  </table></div>
  <p class="small"><a href="/webhooks-log?platform=${e.order.source}">Webhook log of ${e.order.source}</a></p>
</section>`;
}

function receiptsSection(e: EvidenceRecord): SafeHtml {
  if (e.receipts.length === 0) return html``;
  return html`<section aria-labelledby="receipts-heading">
  <h2 id="receipts-heading">Receipt emails</h2>
  <div class="table-wrap"><table>
    <thead><tr><th scope="col">Accepted by the mail server</th><th scope="col">To</th><th scope="col">Status</th><th scope="col">Message id</th></tr></thead>
    <tbody>${e.receipts.map((r) => html`<tr>
      <td>${when(r.acceptedAt)}</td><td>${r.recipients.join(', ')}</td><td>${badge(r.status)}</td><td>${r.messageId ? html`<code>${r.messageId}</code>` : ''}</td></tr>`)}</tbody>
  </table></div>
</section>`;
}

function evidenceLinks(ctx: PageContext, p: PurchaseRow): SafeHtml {
  if (!ctx.isAdmin) return html``;
  return html`<section class="panel" aria-labelledby="evidence-heading">
  <h2 id="evidence-heading">Dispute evidence</h2>
  <p>The order, the receipt, every link issued, every page open and file transfer, and staff actions, in one record to attach to a chargeback reply.</p>
  <p class="actions"><a class="button" href="/api/purchases/${p.id}/evidence?format=json">Evidence (JSON)</a>
    <a class="button" href="/api/purchases/${p.id}/evidence?format=pdf">Evidence (PDF)</a></p>
</section>`;
}

export function purchaseDetailPage(ctx: PageContext, d: PurchaseDetail): string {
  const p = d.purchase;
  return page(ctx, {
    title: `Purchase of ${p.productName}`,
    nav: 'purchases',
    body: html`
<p><a href="/purchases">All purchases</a></p>
${accessNotice(p, ctx)}
${summary(p, d.evidence, d.reminder)}
${actionsPanel(ctx, p)}
${allowancePanel(ctx, p, d.allowance)}
${licenseSection(ctx, p, d.license)}
${linksSection(d.evidence)}
${accessesSection(d.evidence, ctx.isAdmin)}
${staffSection(d.evidence)}
${receiptsSection(d.evidence)}
${ordersSection(d.evidence)}
${evidenceLinks(ctx, p)}`,
  });
}
