import { formatBytes, formatUtc } from '../../domain/format';
import { html, raw, type SafeHtml } from '../../templating/html';

/**
 * The pages customers see: the download page, the pages of expired and unknown links, /my and
 * its answers. Whole documents that work without JavaScript, on a phone, under a strict CSP (no
 * inline script or style: the stylesheet and the downloader are files under /assets/customer/).
 */

export const CUSTOMER_ASSETS_PREFIX = '/assets/customer';

function layout(title: string, main: SafeHtml, options: { downloader?: boolean } = {}): string {
  return html`<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><meta name="robots" content="noindex, nofollow">
<title>${title}</title>
<link rel="stylesheet" href="${CUSTOMER_ASSETS_PREFIX}/customer.css">${options.downloader && html`<script src="${CUSTOMER_ASSETS_PREFIX}/downloader.js" defer></script>`}</head>
<body><main class="card">${main}</main></body></html>`.toString();
}

const eyebrow = (orgName: string): SafeHtml => html`<p class="eyebrow">${orgName}</p>`;

const MY_LINK = html`<a href="/my">get fresh links for all your purchases</a>`;

export interface DownloadPageFile {
  id: string;
  name: string;
  size: number;
}

export interface DownloadPageData {
  token: string;
  orgId: string;
  orgName: string;
  productName: string;
  versionLabel: string | null;
  expiresAt: Date;
  /** How long each opening extends the link, in words ("48 hours"). */
  linkLifetime: string;
  files: DownloadPageFile[];
  /** Set when the purchase's download limit is reached (decisions §10): the page says so instead of offering files. */
  limitReached?: LimitReachedData;
  /** The purchase's license key (decisions §14), when it has one. */
  licenseKey?: string | null;
}

/** What a buyer is told when the download limit is reached. */
export interface LimitReachedData {
  allowed: number;
  supportEmail: string | null;
}

function limitReachedText(d: LimitReachedData): SafeHtml {
  const contact = d.supportEmail === null
    ? html`Please contact the seller if you need to download it again.`
    : html`Please write to <a href="mailto:${d.supportEmail}">${d.supportEmail}</a> if you need to download it again.`;
  const times = d.allowed === 1 ? 'once' : `${d.allowed} times`;
  return html`<p class="notice" id="limit-reached">This purchase can be downloaded ${times}, and that limit has been reached. ${contact}</p>`;
}

/**
 * The key as text anyone can select, and a copy button that the downloader script reveals (without
 * it the button would do nothing); the status line says when it was copied.
 */
function licenseKeyBlock(key: string): SafeHtml {
  return html`<div class="license">
  <p class="license-label" id="license-key-label">Your license key</p>
  <div class="license-row">
    <code class="license-key" id="license-key" aria-labelledby="license-key-label">${key}</code>
    <button type="button" class="button secondary" id="copy-license-key" aria-label="Copy the license key" hidden>Copy</button>
  </div>
  <p class="status" id="license-key-status" role="status" aria-live="polite"></p>
</div>`;
}

export function downloadFileUrl(token: string, fileId: string): string {
  return `/d/${encodeURIComponent(token)}/files/${encodeURIComponent(fileId)}`;
}

/** The link's page: every file as a plain link; the downloader script adds progress and "download all". */
export function downloadPage(d: DownloadPageData): string {
  const rows = d.files.map((f) => {
    const url = downloadFileUrl(d.token, f.id);
    return html`<li class="file" data-file-url="${url}" data-file-name="${f.name}" data-file-size="${f.size}">
  <a class="file-link" href="${url}" download>${f.name}</a>
  <span class="file-size">${formatBytes(f.size)}</span>
  <progress class="file-progress" max="100" value="0" hidden aria-label="${`Progress of ${f.name}`}"></progress>
</li>`;
  });
  const key = d.licenseKey && licenseKeyBlock(d.licenseKey);
  if (d.limitReached) {
    return layout(`Download ${d.productName}`, html`${eyebrow(d.orgName)}<h1>${d.productName}</h1>${d.versionLabel && html`<p class="meta">Version ${d.versionLabel}</p>`}
${key}
${limitReachedText(d.limitReached)}`, { downloader: Boolean(key) });
  }
  const files = d.files.length > 0
    ? html`<ul class="files" aria-label="Files">${rows}</ul>`
    : html`<p class="notice">This version has no files to download any more. Please contact the seller.</p>`;
  const allLabel = d.files.length === 1 ? 'Download' : d.files.length === 2 ? 'Download both files' : `Download all ${d.files.length} files`;
  const actions = d.files.length > 0 && html`<div class="actions" data-js-only hidden>
  <button type="button" class="button" id="download-all">${allLabel}</button>
  <progress id="overall-progress" max="100" value="0" hidden aria-label="Overall progress"></progress>
  <p id="download-status" class="status" role="status" aria-live="polite"></p>
</div>`;
  return layout(`Download ${d.productName}`, html`<div id="downloader" data-token="${d.token}" data-complete-url="/webhooks/${d.orgId}/download-complete">
${eyebrow(d.orgName)}<h1>${d.productName}</h1>${d.versionLabel && html`<p class="meta">Version ${d.versionLabel}</p>`}
${key}
${files}
${actions}
<p class="expiry">This link works until <time datetime="${d.expiresAt.toISOString()}">${formatUtc(d.expiresAt)}</time>. Opening it again gives it another ${d.linkLifetime}.</p>
</div>`, { downloader: true });
}

export interface GoneLinkData {
  token: string;
  orgName: string;
  productName: string;
  reason: 'expired' | 'used';
  /** How long a link works after it was last opened, in words. */
  linkLifetime: string;
}

/** 410: the link is spent, but the customer is one button away from a fresh one. */
export function linkGonePage(d: GoneLinkData): string {
  const heading = d.reason === 'used' ? 'This download link has been used' : 'This download link has expired';
  const why = d.reason === 'used'
    ? 'Its files have already been downloaded, and a link works for one download.'
    : `Download links work for ${d.linkLifetime} after they were last opened.`;
  return layout(heading, html`${eyebrow(d.orgName)}<h1>${heading}</h1>
<p>Your link for <strong>${d.productName}</strong> no longer works. ${why} You can get a fresh link by email.</p>
<form method="post" action="/d/${encodeURIComponent(d.token)}/refresh"><button type="submit" class="button">Email me a fresh link</button></form>
<p class="hint">It goes to the email address the purchase was made with.</p>
<p class="hint">Or ${MY_LINK}.</p>`);
}

/** 410 of a file URL once the purchase's download limit is reached. */
export function limitReachedPage(d: { orgName: string; productName: string } & LimitReachedData): string {
  return layout('Download limit reached', html`${eyebrow(d.orgName)}<h1>Download limit reached</h1>
<p>This file of <strong>${d.productName}</strong> cannot be downloaded any more.</p>
${limitReachedText(d)}`);
}

/**
 * 410 of a revoked purchase's link and file URLs (decisions §9): access was withdrawn, so no
 * fresh link is offered.
 */
export function accessWithdrawnPage(d: { orgName: string; productName: string }): string {
  return layout('Access withdrawn', html`${eyebrow(d.orgName)}<h1>Access to this download has been withdrawn</h1>
<p>The seller has withdrawn access to <strong>${d.productName}</strong>, for example after a refund. This link and its files no longer work.</p>
<p class="hint">If you think this is a mistake, please contact the seller.</p>`);
}

/** 404 for a token that does not exist: nothing about why, nothing about anyone's purchases. */
export function unknownLinkPage(): string {
  return layout('Download link not found', html`<h1>We could not find this download link</h1>
<p>Please check that you opened the whole link from your email; some email programs split long links.</p>
<p>You can also ${MY_LINK}.</p>`);
}

/** The answer to the "email me a fresh link" button. */
export function freshLinkSentPage(): string {
  return layout('Check your email', html`<h1>Check your email</h1>
<p>We are sending a fresh download link to the email address the purchase was made with. It should arrive within a few minutes; please also look in your spam folder.</p>`);
}

/** GET /my, and POST /my with something that is not an email address (then with `error`). */
export function myFormPage(options: { error?: string; email?: string } = {}): string {
  return layout('Get your download links', html`<h1>Get your download links</h1>
<p>Enter the email address you used when you bought. We will email you fresh download links for your purchases.</p>
<form method="post" action="/my" class="stack">
  <label for="email">Email</label>
  <input id="email" name="email" type="email" autocomplete="email" inputmode="email" required maxlength="320" value="${options.email ?? ''}"${options.error && raw(' aria-describedby="email-error" aria-invalid="true"')}>
  ${options.error && html`<p class="error" id="email-error" role="alert">${options.error}</p>`}
  <button type="submit" class="button">Email me my links</button>
</form>`);
}

/** POST /my: word for word the same whether or not the address has purchases. */
export function myRequestedPage(): string {
  return layout('Check your email', html`<h1>Check your email</h1>
<p>If there are purchases under that email address, we are sending fresh download links to it: one email for each shop you bought from. They should arrive within a few minutes; please also look in your spam folder.</p>
<p class="hint"><a href="/my">Use another email address</a></p>`);
}

/** 429, with how long to wait. */
export function tooManyRequestsPage(retryAfterSeconds: number): string {
  const minutes = Math.max(1, Math.ceil(retryAfterSeconds / 60));
  return layout('Please wait a little', html`<h1>Please wait a little</h1>
<p>Download links have been requested too often from here or for this address. To keep your purchases safe, we limit how often links can be sent.</p>
<p>Please try again in about ${minutes} ${minutes === 1 ? 'minute' : 'minutes'}. Links already sent keep working.</p>`);
}

/** Any other error of a customer page (the error handler's `page` format). */
export function customerErrorPage(status: number, message: string): string {
  const heading = status >= 500 ? 'Something went wrong on our side' : status === 404 ? 'Page not found' : 'That did not work';
  const detail = status >= 500 ? 'Please try again in a moment.' : message;
  return layout(heading, html`<h1>${heading}</h1><p>${detail}</p>`);
}

/** The unsubscribe link's page: one button (a GET changes nothing, so link scanners do no harm). */
export function unsubscribePage(d: { orgName: string; token: string }): string {
  return layout('Stop update emails', html`${eyebrow(d.orgName)}<h1>Stop emails about new versions?</h1>
<p>${d.orgName} emails you when a product you bought has a new version, and reminds you once of a purchase you have not downloaded. You can stop these emails; your download links and receipts are not affected.</p>
<form method="post" action="/unsubscribe/${encodeURIComponent(d.token)}"><button type="submit" class="button">Stop update emails</button></form>`);
}

export function unsubscribedPage(d: { orgName: string }): string {
  return layout('Unsubscribed', html`${eyebrow(d.orgName)}<h1>You will not get update emails any more</h1>
<p>${d.orgName} will not email you about new versions or remind you of downloads. Receipts and the download links you ask for still reach you.</p>`);
}

export function unknownUnsubscribePage(): string {
  return layout('Link not found', html`<h1>We could not find this unsubscribe link</h1>
<p>Please check that you opened the whole link from the email.</p>`);
}
