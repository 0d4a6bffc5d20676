import type { SessionUser } from '../plugins/session';
import { CSRF_FIELD } from '../plugins/session';
import { html, type SafeHtml } from '../../templating/html';

/** What every signed-in page knows about its viewer. */
export interface PageContext {
  user: SessionUser;
  csrfToken: string;
  /** Owner or admin: organisation settings, team, reports. */
  isAdmin: boolean;
  /** The embedded dev mailbox runs in this process (Settings shows it). */
  hasDevMailbox: boolean;
}

export type NavKey = 'overview' | 'products' | 'purchases' | 'customers' | 'webhooks' | 'reports' | 'settings';

interface NavLink {
  key: NavKey;
  href: string;
  label: string;
  adminOnly?: boolean;
}

/** The navigation of decisions §8, in this order. */
const NAV: NavLink[] = [
  { key: 'overview', href: '/', label: 'Overview' },
  { key: 'products', href: '/products', label: 'Products' },
  { key: 'purchases', href: '/purchases', label: 'Purchases' },
  { key: 'customers', href: '/customers', label: 'Customers' },
  { key: 'webhooks', href: '/webhooks-log', label: 'Webhook log' },
  { key: 'reports', href: '/reports', label: 'Reports', adminOnly: true },
  { key: 'settings', href: '/settings', label: 'Settings' },
];

/**
 * htmx swaps error answers too (4xx/5xx fragments carry role="alert"), so a refused form shows why
 * where its result would have gone.
 */
const HTMX_CONFIG = JSON.stringify({
  responseHandling: [
    { code: '204', swap: false },
    { code: '[23]..', swap: true },
    { code: '[45]..', swap: true, error: true },
  ],
  includeIndicatorStyles: false,
});

function head(title: string): SafeHtml {
  return html`<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Delivery</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/app.css">
<meta name="htmx-config" content="${HTMX_CONFIG}">
<script src="/assets/htmx.min.js" defer></script>
<script src="/assets/app.js" defer></script>
</head>`;
}

/** The hidden CSRF field of a dashboard form. */
export const csrfField = (ctx: Pick<PageContext, 'csrfToken'>): SafeHtml =>
  html`<input type="hidden" name="${CSRF_FIELD}" value="${ctx.csrfToken}">`;

export interface PageOptions {
  title: string;
  nav: NavKey | null;
  body: SafeHtml;
}

/** A signed-in page: skip link, header with the navigation, and the main landmark. */
export function page(ctx: PageContext, options: PageOptions): string {
  const links = NAV.filter((link) => !link.adminOnly || ctx.isAdmin).map((link) =>
    html`<li><a href="${link.href}"${link.key === options.nav ? html` aria-current="page"` : ''}>${link.label}</a></li>`);
  const hxHeaders = JSON.stringify({ 'X-CSRF-Token': ctx.csrfToken });
  return `<!doctype html>${html`<html lang="en">
${head(options.title)}
<body hx-headers="${hxHeaders}" data-csrf="${ctx.csrfToken}">
<a class="skip-link" href="#main">Skip to content</a>
<header class="topbar">
  <div class="topbar-row">
    <a class="brand" href="/">Delivery</a>
    <span class="org-name">${ctx.user.orgName ?? ''}</span>
    <form class="signout" method="post" action="/signout">
      ${csrfField(ctx)}
      <span class="who" title="${ctx.user.email}">${ctx.user.email} (${ctx.user.role})</span>
      <button type="submit" class="link-button">Sign out</button>
    </form>
  </div>
  <nav aria-label="Main"><ul class="nav">${links}</ul></nav>
</header>
<main id="main" tabindex="-1">
<h1>${options.title}</h1>
${options.body}
</main>
</body>
</html>`}`;
}

/** A page without the navigation: sign-in, and errors before anyone is signed in. */
export function barePage(title: string, body: SafeHtml): string {
  return `<!doctype html>${html`<html lang="en">
${head(title)}
<body class="bare">
<main id="main" class="narrow">
${body}
</main>
</body>
</html>`}`;
}

/** A status message region (polite), e.g. for "saved". */
export const notice = (text: string, kind: 'ok' | 'error' = 'ok'): SafeHtml =>
  kind === 'error'
    ? html`<div class="error" role="alert">${text}</div>`
    : html`<div class="ok" role="status">${text}</div>`;
