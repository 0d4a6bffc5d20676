import type { ProductListing } from '../../services/products';
import type { NotificationProgress } from '../../services/version-notifications';
import type { VersionJson } from '../../services/versions';
import { badge, bytes, emptyRow, resultRegion, statusLine, when } from './components';
import { html, type SafeHtml } from '../../templating/html';
import { csrfField, notice, page, type PageContext } from './layout';

/** A product is live when published with a ready active version (decisions §3). */
export function isLive(listing: ProductListing): boolean {
  return listing.product.status === 'published' && listing.activeVersion?.status === 'ready';
}

function liveBadge(listing: ProductListing): SafeHtml {
  return isLive(listing) ? badge('success', 'live') : badge('pending', 'not live');
}

/** Why a product is not live yet, in words that say what to do. */
export function whyNotLive(listing: ProductListing): string | null {
  if (isLive(listing)) return null;
  const steps: string[] = [];
  if (!listing.activeVersion) steps.push('upload a version and make it active');
  if (listing.product.status !== 'published') steps.push('publish it');
  return `Not live yet: ${steps.join(', then ')}. Until then sales of it are held.`;
}

const skuText = (skus: string[]): string => skus.join('\n');

function productFields(ctx: PageContext, p?: ProductListing['product']): SafeHtml {
  // A member's form sends an existing product's limit back unchanged (the service refuses a change).
  const limitLocked = p !== undefined && !ctx.isAdmin;
  const id = p ? 'edit' : 'new';
  return html`${csrfField(ctx)}
    <label for="${id}-name">Name</label>
    <input id="${id}-name" name="name" required maxlength="500" value="${p?.name ?? ''}">
    <label for="${id}-slug">Slug <span class="hint">Lowercase letters, digits and hyphens; unique here. It is also a SKU.</span></label>
    <input id="${id}-slug" name="slug" required maxlength="200" value="${p?.slug ?? ''}">
    <label for="${id}-description">Description</label>
    <textarea id="${id}-description" name="description" maxlength="20000">${p?.description ?? ''}</textarea>
    <label for="${id}-skus">Extra SKUs <span class="hint">One per line or separated by commas: the SKUs your sales platforms send for this product.</span></label>
    <textarea id="${id}-skus" name="skus">${p ? skuText(p.skus) : ''}</textarea>
    <label for="${id}-download-limit">Download limit <span class="hint">Completed file transfers allowed per purchase; leave it empty for unlimited. A purchase may have its own.${limitLocked ? ' Owners and admins change it.' : ''}</span></label>
    <input id="${id}-download-limit" class="short" name="downloadLimit" type="number" min="1" max="1000000" step="1" inputmode="numeric" value="${p?.downloadLimit ?? ''}"${limitLocked ? html` readonly` : ''}>`;
}

/** A product's download limit in words (decisions §10). */
export const downloadLimitText = (limit: number | null): string =>
  limit === null ? 'unlimited' : `${limit} per purchase`;

export function productsPage(ctx: PageContext, products: ProductListing[]): string {
  return page(ctx, {
    title: 'Products',
    nav: 'products',
    body: html`
<div class="table-wrap"><table>
  <caption class="visually-hidden">Products</caption>
  <thead><tr><th scope="col">Name</th><th scope="col">Slug</th><th scope="col">Status</th><th scope="col">Active version</th><th scope="col">Extra SKUs</th><th scope="col">Download limit</th></tr></thead>
  <tbody>${products.length === 0 ? emptyRow(6, 'No products yet: create the first one below.') : products.map((l) => html`<tr data-product="${l.product.slug}">
    <td><a href="/products/${l.product.id}">${l.product.name}</a></td>
    <td><code>${l.product.slug}</code></td>
    <td>${badge(l.product.status)} ${liveBadge(l)}</td>
    <td>${l.activeVersion?.version ?? html`<span class="muted">none</span>`}</td>
    <td>${l.product.skus.length ? l.product.skus.map((s, i) => html`${i ? ', ' : ''}<code>${s}</code>`) : html`<span class="muted">none</span>`}</td>
    <td>${l.product.downloadLimit === null ? html`<span class="muted">unlimited</span>` : downloadLimitText(l.product.downloadLimit)}</td></tr>`)}</tbody>
</table></div>
<section class="panel" aria-labelledby="new-heading">
  <h2 id="new-heading">New product</h2>
  <p class="muted small">New products start as drafts: upload a version and publish it to sell it.</p>
  <form method="post" action="/products" hx-post="/products" hx-target="#create-result" class="stack">
    ${productFields(ctx)}
    <button type="submit" class="primary">Create product</button>
  </form>
  ${resultRegion('create-result')}
</section>`,
  });
}

const DONE: Record<string, string> = {
  created: 'Product created. Next: upload its first version.',
  saved: 'Saved.',
  published: 'Published.',
  archived: 'Archived: it is no longer sold.',
  draft: 'Back to draft: it is no longer sold.',
  activated: 'The active version was changed.',
};

function statusButtons(ctx: PageContext, l: ProductListing): SafeHtml {
  const to = (status: string, label: string, extra = '') => html`
    <form method="post" action="/products/${l.product.id}/status" hx-post="/products/${l.product.id}/status" hx-target="#status-result" class="inline"${extra ? html` data-confirm="${extra}"` : ''}>
      ${csrfField(ctx)}<input type="hidden" name="status" value="${status}">
      <button type="submit"${status === 'published' ? html` class="primary"` : ''}>${label}</button>
    </form>`;
  const s = l.product.status;
  return html`<div class="actions">
    ${s !== 'published' ? to('published', 'Publish') : ''}
    ${s !== 'archived' ? to('archived', 'Archive', 'Archive this product? Its sales will be held until it is published again.') : ''}
    ${s !== 'draft' ? to('draft', 'Back to draft') : ''}
  </div>`;
}

function versionRows(ctx: PageContext, l: ProductListing, versions: VersionJson[]): SafeHtml[] {
  return versions.map((v) => {
    const active = l.activeVersion?.id === v.id;
    return html`<tr data-version="${v.version}">
      <td><strong>${v.version}</strong> ${active ? badge('success', 'active') : ''}</td>
      <td>${badge(v.status === 'ready' ? 'success' : 'pending', v.status)}</td>
      <td><ul class="items">${v.files.map((f) => html`<li>${f.name} <span class="muted small">(${bytes(f.size)})</span></li>`)}</ul></td>
      <td>${when(v.createdAt)}</td>
      <td>${active || v.status !== 'ready' ? '' : html`
        <form method="post" action="/products/${l.product.id}/active-version" hx-post="/products/${l.product.id}/active-version" hx-target="#versions-result">
          ${csrfField(ctx)}<input type="hidden" name="versionId" value="${v.id}">
          <button type="submit">Make active</button>
        </form>`}</td></tr>`;
  });
}

/** The product's version notices (decisions §12): who a notice of the active version would email, and each one sent. */
export interface VersionNotices {
  /** Buyers a notice of the active version would email now. */
  wouldEmail: number;
  /** The active version came after another (a product's first version is nothing new to its buyers). */
  activeIsNewer: boolean;
  /** Newest first. */
  notifications: NotificationProgress[];
}

const COUNT = new Intl.NumberFormat('en-GB');
const buyers = (n: number): string => `${COUNT.format(n)} buyer${n === 1 ? '' : 's'}`;

/** The notify button of the active version, or why there is none (notified already, nobody to email, a member). */
function notifyControl(ctx: PageContext, l: ProductListing, v: VersionNotices): SafeHtml {
  const active = l.activeVersion;
  if (!active || active.status !== 'ready') {
    return html`<p class="muted">Make a ready version active to notify buyers of it.</p>`;
  }
  const notified = v.notifications.find((n) => n.versionId === active.id);
  if (notified) {
    return html`<p data-testid="notified">Buyers were notified of this version (${active.version}): ${notified.status === 'done'
      ? `${COUNT.format(notified.sent)} emailed${notified.failed ? `, ${COUNT.format(notified.failed)} refused by the mail server` : ''}.`
      : `${COUNT.format(notified.sent + notified.failed)} of ${COUNT.format(notified.total)} so far.`}</p>`;
  }
  if (!v.activeIsNewer) {
    return html`<p class="muted" data-testid="would-email">Version ${active.version} is the first: once a newer version is active, its buyers can be emailed about it here.</p>`;
  }
  if (v.wouldEmail === 0) {
    return html`<p class="muted" data-testid="would-email">No buyer to notify of version ${active.version} (revoked and test purchases and unsubscribed customers get no notice).</p>`;
  }
  if (!ctx.isAdmin) {
    return html`<p data-testid="would-email">A notice of version ${active.version} would email ${buyers(v.wouldEmail)}. An owner or admin can send it.</p>`;
  }
  return html`<form data-json action="/api/products/${l.product.id}/versions/${active.id}/notify" data-done="Notifying buyers. Reloading…"
      data-confirm="Email ${buyers(v.wouldEmail)} that version ${active.version} of ${l.product.name} is out, each with a fresh download link? It is sent once per version and cannot be undone.">
    <p>Each buyer (not revoked, not a test, not unsubscribed) gets one email with a fresh link to version ${active.version} and a one-click
      unsubscribe, a few per second; the progress shows below. A version is announced once.</p>
    <button type="submit" class="primary">Notify ${buyers(v.wouldEmail)} of version ${active.version}</button>
    ${statusLine()}
  </form>`;
}

function noticeRows(v: VersionNotices): SafeHtml | SafeHtml[] {
  if (v.notifications.length === 0) return emptyRow(8, 'No buyer was notified of a version yet.');
  return v.notifications.map((n) => {
    const max = Math.max(n.total, 1);
    const value = n.status === 'done' ? max : Math.min(n.sent + n.failed, max);
    return html`<tr data-notification-id="${n.notificationId}" data-status="${n.status}">
      <td>${n.version}</td>
      <td>${badge(n.status === 'done' ? 'success' : 'pending', n.status)}</td>
      <td class="num" data-testid="notice-sent">${COUNT.format(n.sent)}</td>
      <td class="num">${COUNT.format(n.failed)}</td>
      <td class="num" data-testid="notice-left">${COUNT.format(n.left)}</td>
      <td><progress max="${max}" value="${value}" aria-label="Version ${n.version}: ${COUNT.format(n.sent + n.failed)} of ${COUNT.format(n.total)} emailed">${Math.round((value / max) * 100)} %</progress></td>
      <td>${when(n.startedAt)}</td>
      <td>${n.completedAt === null ? html`<span class="muted">running</span>` : when(n.completedAt)}</td></tr>`;
  });
}

/**
 * The "Version notices" section, also served alone (GET /products/:id/notices): while a notice is
 * being sent it fetches itself again every 2 s (htmx) and swaps itself; once none runs, the copy
 * it swaps in has no trigger, so the polling stops.
 */
export function versionNoticesSection(ctx: PageContext, l: ProductListing, v: VersionNotices): SafeHtml {
  const running = v.notifications.some((n) => n.status === 'running');
  return html`<section class="panel" id="version-notices" aria-labelledby="notices-heading"${running
    ? html` hx-get="/products/${l.product.id}/notices" hx-trigger="every 2s" hx-swap="outerHTML"`
    : ''}>
  <h2 id="notices-heading">Version notices</h2>
  ${notifyControl(ctx, l, v)}
  <div class="table-wrap"><table data-testid="notices">
    <caption class="visually-hidden">Version notices, newest first</caption>
    <thead><tr><th scope="col">Version</th><th scope="col">Status</th><th scope="col" class="num">Sent</th><th scope="col" class="num">Failed</th>
      <th scope="col" class="num">Left</th><th scope="col">Progress</th><th scope="col">Started</th><th scope="col">Completed</th></tr></thead>
    <tbody>${noticeRows(v)}</tbody>
  </table></div>
</section>`;
}

export function productPage(ctx: PageContext, l: ProductListing, versions: VersionJson[], notices: VersionNotices, done?: string): string {
  const p = l.product;
  const why = whyNotLive(l);
  return page(ctx, {
    title: p.name,
    nav: 'products',
    body: html`
<p><a href="/products">All products</a></p>
${done && DONE[done] ? notice(DONE[done]) : ''}
<section class="panel" aria-labelledby="status-heading">
  <h2 id="status-heading">Status: ${badge(p.status)} ${liveBadge(l)}</h2>
  ${why ? html`<p class="warn">${why}</p>` : html`<p>Live: sales of <code>${p.slug}</code>${p.skus.length ? ' and its extra SKUs' : ''} are delivered with version ${l.activeVersion?.version ?? ''}.</p>`}
  <p data-testid="product-download-limit">Download limit: ${downloadLimitText(p.downloadLimit)}${p.downloadLimit === null ? '' : ' (completed file transfers; re-arm a purchase from its page to start its count again)'}.</p>
  ${statusButtons(ctx, l)}
  ${resultRegion('status-result')}
</section>

<section class="panel" aria-labelledby="versions-heading">
  <h2 id="versions-heading">Versions</h2>
  <div class="table-wrap"><table>
    <thead><tr><th scope="col">Version</th><th scope="col">Status</th><th scope="col">Files</th><th scope="col">Uploaded</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
    <tbody>${versions.length === 0 ? emptyRow(5, 'No version yet.') : versionRows(ctx, l, versions)}</tbody>
  </table></div>
  ${resultRegion('versions-result')}
  <h3 id="upload-heading">Upload a new version</h3>
  <form data-upload method="post" enctype="multipart/form-data" action="/api/products/${p.id}/versions" aria-labelledby="upload-heading"
        data-done="Uploaded. Reloading…" class="stack">
    <label for="version-label">Version label <span class="hint">For example 1.0.0; unique for this product.</span></label>
    <input id="version-label" name="version" required maxlength="100">
    <label class="check"><input type="checkbox" name="activate" value="true" checked> Make it the active version</label>
    <label for="version-files">Files</label>
    <input id="version-files" name="file" type="file" multiple required>
    <progress hidden max="100" aria-label="Upload progress"></progress>
    <button type="submit" class="primary">Upload</button>
    ${statusLine()}
  </form>
</section>

${versionNoticesSection(ctx, l, notices)}

<section class="panel" aria-labelledby="details-heading">
  <h2 id="details-heading">Details</h2>
  <form method="post" action="/products/${p.id}" hx-post="/products/${p.id}" hx-target="#details-result" class="stack">
    ${productFields(ctx, p)}
    <button type="submit" class="primary">Save</button>
  </form>
  ${resultRegion('details-result')}
  <p class="muted small">Id <code>${p.id}</code>, created ${when(p.createdAt)}, updated ${when(p.updatedAt)}.</p>
</section>`,
  });
}
