import { formatUtc } from '../domain/format';
import { html, type SafeHtml } from '../templating/html';

/**
 * Email bodies: a plain-text part that reads well on its own (links on lines of their own, no
 * markup), and the same content as simple HTML with inline styles (mail clients drop stylesheets).
 */
export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
  headers?: Record<string, string>;
}

export interface DownloadLinkLine {
  productName: string;
  /** The purchased version's label, when known. */
  versionLabel?: string | null;
  link: string;
  expiresAt: Date;
  /** The purchase's license key (decisions §14), when it has one. */
  licenseKey?: string | null;
}

/** How long a link works after each opening, in words ("48 hours"; DOWNLOAD_LINK_TTL). */
export interface LinkLifetime {
  linkLifetime: string;
}

/** `{site_url}/my`, from a link `{site_url}/d/{token}` (links are always built that way). */
function myUrlOf(link: string): string {
  return `${link.slice(0, link.lastIndexOf('/d/'))}/my`;
}

function productLabel(line: DownloadLinkLine): string {
  return line.versionLabel ? `${line.productName} (version ${line.versionLabel})` : line.productName;
}

/** The key's line in a text part: on a line of its own after its label, easy to select. */
function licenseKeyText(line: DownloadLinkLine): string[] {
  return line.licenseKey ? [`Your license key: ${line.licenseKey}`] : [];
}

const TEXT_STYLE = 'font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;font-size:16px;line-height:1.5;color:#1f2328';
const MUTED_STYLE = 'color:#57606a;font-size:14px';

function emailDocument(title: string, body: SafeHtml): string {
  return html`<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title></head>
<body style="margin:0;padding:0;background:#f6f8fa"><div style="${TEXT_STYLE};max-width:560px;margin:0 auto;padding:24px 16px">
<div style="background:#ffffff;border:1px solid #d0d7de;border-radius:8px;padding:24px">${body}</div></div></body></html>`.toString();
}

const KEY_STYLE = 'font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:16px;background:#f6f8fa;'
  + 'border:1px solid #d0d7de;border-radius:6px;padding:4px 8px;display:inline-block;word-break:break-all;user-select:all';

/** The key in the HTML part: monospaced in a box of its own, selected whole by one click where the client allows. */
function licenseKeyBlock(line: DownloadLinkLine): SafeHtml | null {
  return line.licenseKey ? html`<p style="margin:12px 0 0">Your license key: <code style="${KEY_STYLE}">${line.licenseKey}</code></p>` : null;
}

function button(href: string, label: string): SafeHtml {
  return html`<p style="margin:16px 0"><a href="${href}" style="display:inline-block;padding:12px 20px;background:#0b57d0;color:#ffffff;text-decoration:none;border-radius:6px;font-weight:600">${label}</a></p>`;
}

/** RFC 8058 one-click unsubscribe: mail clients show their own button for it. */
function oneClickUnsubscribe(url: string): Record<string, string> {
  return { 'List-Unsubscribe': `<${url}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' };
}

function greetingOf(name: string | undefined): string {
  return name?.trim() ? `Hello ${name.trim()},` : 'Hello,';
}

/** One link in the HTML part: the product, its license key if any, a button, the address spelled out, its expiry. */
function linkBlock(line: DownloadLinkLine): SafeHtml {
  return html`<div style="margin:20px 0;padding-top:4px">
<p style="margin:0;font-weight:600">${productLabel(line)}</p>
${licenseKeyBlock(line)}
${button(line.link, `Download ${line.productName}`)}
<p style="margin:0;${MUTED_STYLE};word-break:break-all">${line.link}</p>
<p style="margin:4px 0 0;${MUTED_STYLE}">Works until ${formatUtc(line.expiresAt)}.</p></div>`;
}

/** The receipt of a sale: subject with the product's name, the link, when it expires. */
export function receiptMail(input: { orgName: string; customerName: string } & DownloadLinkLine & LinkLifetime): RenderedMail {
  const greeting = greetingOf(input.customerName);
  const subject = `Your download: ${input.productName}`;
  const myUrl = myUrlOf(input.link);
  const expiry = formatUtc(input.expiresAt);
  const text = [
    greeting,
    '',
    `Thank you for buying ${productLabel(input)} from ${input.orgName}.`,
    '',
    ...licenseKeyText(input).flatMap((keyLine) => [keyLine, '']),
    'Download it here:',
    input.link,
    '',
    `This link works until ${expiry}. Each time you open it, it works for another ${input.linkLifetime}.`,
    'If it has expired, open it anyway: the page can email you a fresh one.',
    `Fresh links for all your purchases: ${myUrl}`,
    '',
    `-- ${input.orgName}`,
  ].join('\n');
  return { subject, text, html: emailDocument(subject, html`<p style="margin-top:0">${greeting}</p>
<p>Thank you for buying <strong>${productLabel(input)}</strong> from ${input.orgName}.</p>
${linkBlock(input)}
<p style="${MUTED_STYLE}">Each time you open the link, it works for another ${input.linkLifetime}. If it has expired, open it anyway: the page can email you a fresh one. Fresh links for all your purchases: <a href="${myUrl}">${myUrl}</a></p>
<p style="margin-bottom:0">${input.orgName}</p>`) };
}

/** What sets one unsubscribable link mail apart from another; the rest of its layout is shared. */
interface UnsubscribableLinkParts {
  subject: string;
  intro: string;
  /** The text part's lines about the link. */
  linkText: string[];
  note: string;
  unsubscribeText: string;
  unsubscribeHtml: SafeHtml;
}

/**
 * A mail the buyer did not ask for that carries one fresh link (a reminder, a new version's notice):
 * greeting, intro, the link, a note, the way to fresh links for everything, and the one-click way to
 * stop such mail (List-Unsubscribe, RFC 8058).
 */
function unsubscribableLinkMail(
  input: { orgName: string; customerName?: string; unsubscribeUrl: string } & DownloadLinkLine, parts: UnsubscribableLinkParts,
): RenderedMail {
  const greeting = greetingOf(input.customerName);
  const text = [
    greeting, '', parts.intro, '', ...parts.linkText, '', parts.note,
    `Fresh links for all your purchases: ${myUrlOf(input.link)}`, '', parts.unsubscribeText, '', `-- ${input.orgName}`,
  ].join('\n');
  return {
    subject: parts.subject,
    text,
    html: emailDocument(parts.subject, html`<p style="margin-top:0">${greeting}</p><p>${parts.intro}</p>
${linkBlock(input)}
<p style="${MUTED_STYLE}">${parts.note}</p>
<p style="${MUTED_STYLE}">${parts.unsubscribeHtml}</p>
<p style="margin-bottom:0">${input.orgName}</p>`),
    headers: oneClickUnsubscribe(input.unsubscribeUrl),
  };
}

/**
 * The reminder to a buyer who has not downloaded (decisions §16): the product, a fresh link, and
 * the one-click way to stop the seller's emails, which also stops any later reminder (List-Unsubscribe,
 * as on update notices).
 */
export function reminderMail(input: { orgName: string; customerName: string; unsubscribeUrl: string } & DownloadLinkLine & LinkLifetime): RenderedMail {
  return unsubscribableLinkMail(input, {
    subject: `Your download is waiting: ${input.productName}`,
    intro: `You bought ${productLabel(input)} from ${input.orgName}, but it has not been downloaded yet. Here is a fresh link:`,
    linkText: [productLabel(input), ...licenseKeyText(input), input.link],
    note: `The link works until ${formatUtc(input.expiresAt)}, and for another ${input.linkLifetime} each time you open it. `
      + 'If you already have the files, you can ignore this email: it is the only reminder.',
    unsubscribeText: `To stop emails like this one from ${input.orgName}, unsubscribe here: ${input.unsubscribeUrl}`,
    unsubscribeHtml: html`<a href="${input.unsubscribeUrl}">Stop emails like this one</a> from ${input.orgName}.`,
  });
}

/** Fresh links, one email per organisation: every purchase asked for, each with its new link. */
export function freshLinksMail(input: { orgName: string; customerName?: string; links: DownloadLinkLine[] } & LinkLifetime): RenderedMail {
  const greeting = greetingOf(input.customerName);
  const [first] = input.links;
  const subject = input.links.length === 1
    ? `Your fresh download link: ${first.productName} from ${input.orgName}`
    : `Your ${input.links.length} download links from ${input.orgName}`;
  const intro = input.links.length === 1
    ? `Here is a fresh download link for your purchase from ${input.orgName}:`
    : `Here are fresh download links for your ${input.links.length} purchases from ${input.orgName}:`;
  const myUrl = first ? myUrlOf(first.link) : '';
  const note = `Each link works for ${input.linkLifetime}, and for another ${input.linkLifetime} each time you open it.`;
  const notYou = 'These links were requested on our download pages. If that was not you, you can ignore this email: ' +
    'the links were sent only to you.';
  const text = [
    greeting,
    '',
    intro,
    '',
    ...input.links.flatMap((line) => [productLabel(line), ...licenseKeyText(line), line.link, `Works until ${formatUtc(line.expiresAt)}`, '']),
    note,
    notYou,
    `Fresh links for all your purchases: ${myUrl}`,
    '',
    `-- ${input.orgName}`,
  ].join('\n');
  return { subject, text, html: emailDocument(subject, html`<p style="margin-top:0">${greeting}</p><p>${intro}</p>
${input.links.map(linkBlock)}
<p style="${MUTED_STYLE}">${note} ${notYou}</p>
<p style="margin-bottom:0">${input.orgName}</p>`) };
}

/** To owners and admins when no product of an order reached the customer. */
export function orderAlertMail(input: {
  orgName: string;
  platform: string;
  externalOrderId: string;
  lines: Array<{ sku: string | null; reason: string | null }>;
  logUrl: string;
}): RenderedMail {
  const subject = `Order ${input.externalOrderId} from ${input.platform} could not be fulfilled`;
  const summary = `No product of order ${input.externalOrderId} from ${input.platform} reached the customer.`;
  const text = [
    `${input.orgName}:`,
    '',
    summary,
    '',
    ...input.lines.map((l) => `- SKU ${l.sku ?? '(none)'}: ${l.reason ?? 'unknown reason'}`),
    '',
    'Fix the cause (publish the product, map the SKU, ...), then have the platform re-deliver the order or record it by hand.',
    `Webhook log: ${input.logUrl}`,
  ].join('\n');
  return { subject, text, html: emailDocument(subject, html`<p style="margin-top:0;${MUTED_STYLE}">${input.orgName}</p>
<p>No product of order <strong>${input.externalOrderId}</strong> from <strong>${input.platform}</strong> reached the customer.</p>
<ul>${input.lines.map((l) => html`<li><code>${l.sku ?? '(none)'}</code>: ${l.reason ?? 'unknown reason'}</li>`)}</ul>
<p>Fix the cause (publish the product, map the SKU, ...), then have the platform re-deliver the order or record it by hand.</p>
${button(input.logUrl, 'Open the webhook log')}`) };
}

/**
 * A new version of something the customer bought (decisions §12): a fresh link to it, and a
 * one-click way to stop these notices (the page, and the List-Unsubscribe headers of RFC 2369 and
 * RFC 8058 that mail clients show as an "Unsubscribe" button).
 */
export function updateNoticeMail(input: {
  orgName: string;
  customerName?: string;
  unsubscribeUrl: string;
} & DownloadLinkLine & LinkLifetime): RenderedMail {
  return unsubscribableLinkMail(input, {
    subject: `New version of ${input.productName}${input.versionLabel ? `: ${input.versionLabel}` : ''}`,
    intro: `${input.orgName} has released a new version of ${input.productName}, which you bought. Here is a download link for it:`,
    linkText: [productLabel(input), input.link, `Works until ${formatUtc(input.expiresAt)}`],
    note: `The link works for ${input.linkLifetime}, and for another ${input.linkLifetime} each time you open it.`,
    unsubscribeText: 'You get this email because you bought this product. To stop emails about new versions from '
      + `${input.orgName}, unsubscribe here: ${input.unsubscribeUrl}`,
    unsubscribeHtml: html`You get this email because you bought this product. <a href="${input.unsubscribeUrl}">Stop emails about new versions</a>.`,
  });
}

/** To owners and admins when outbound deliveries disabled a webhook endpoint (410, or failing for OUTBOUND_DISABLE_AFTER). */
export function endpointDisabledMail(input: { orgName: string; url: string; reason: string; settingsUrl: string }): RenderedMail {
  const subject = `Webhook endpoint disabled: ${input.url}`;
  const advice = 'Events are no longer sent to it; re-enabling it does not replay what it missed (GET /api/events catches up).';
  const text = [
    `${input.orgName}:`,
    '',
    `The webhook endpoint ${input.url} was disabled: ${input.reason}.`,
    advice,
    '',
    `Settings › Webhooks: ${input.settingsUrl}`,
  ].join('\n');
  return { subject, text, html: emailDocument(subject, html`<p style="margin-top:0;${MUTED_STYLE}">${input.orgName}</p>
<p>The webhook endpoint <code>${input.url}</code> was disabled: ${input.reason}.</p>
<p>${advice}</p>
${button(input.settingsUrl, 'Open Settings › Webhooks')}`) };
}

/** To owners and admins when a platform refused the read-only credentials of reconciliation (decisions §15): its schedule is paused. */
export function reconcileRefusedMail(input: { orgName: string; platform: string; reason: string; settingsUrl: string }): RenderedMail {
  const subject = `Reconciliation paused for ${input.platform}: credentials refused`;
  const advice = 'Missed webhooks of this platform are not looked for until the credentials are saved again (with read access to orders).';
  const text = [
    `${input.orgName}:`,
    '',
    `Reading ${input.platform}'s order list stopped: ${input.reason}.`,
    advice,
    '',
    `Settings › Integrations: ${input.settingsUrl}`,
  ].join('\n');
  return { subject, text, html: emailDocument(subject, html`<p style="margin-top:0;${MUTED_STYLE}">${input.orgName}</p>
<p>Reading ${input.platform}'s order list stopped: ${input.reason}.</p>
<p>${advice}</p>
${button(input.settingsUrl, 'Open Settings › Integrations')}`) };
}

/**
 * To owners and admins when a product's license-key pool runs dry (a sale waits for a key) or falls
 * below its warning level (decisions §14).
 */
export function licensePoolMail(input: { orgName: string; productName: string; kind: 'dry' | 'low'; available: number; productUrl: string }): RenderedMail {
  const subject = input.kind === 'dry'
    ? `License keys ran out: ${input.productName}`
    : `License keys running low: ${input.productName}`;
  const state = input.kind === 'dry'
    ? `The license-key pool of ${input.productName} is empty: new sales are recorded, and their receipts wait until keys are uploaded.`
    : `The license-key pool of ${input.productName} has ${input.available} key${input.available === 1 ? '' : 's'} left.`;
  const advice = 'Upload more keys on the product\'s page (one per line); waiting receipts go out at once, oldest sale first.';
  const text = [`${input.orgName}:`, '', state, advice, '', `The product: ${input.productUrl}`].join('\n');
  return { subject, text, html: emailDocument(subject, html`<p style="margin-top:0;${MUTED_STYLE}">${input.orgName}</p>
<p>${state}</p>
<p>${advice}</p>
${button(input.productUrl, 'Open the product')}`) };
}
