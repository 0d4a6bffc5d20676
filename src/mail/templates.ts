/** Email bodies: a plain-text part that reads well on its own, and the same content as HTML. */
export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
}

export function escapeHtml(value: string): string {
  return value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

function formatExpiry(date: Date): string {
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

function htmlPage(title: string, body: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>` +
    `<body style="font-family:system-ui,sans-serif;line-height:1.5;color:#1a1a1a;max-width:560px;margin:auto;padding:16px">${body}</body></html>`;
}

export interface DownloadLinkLine {
  productName: string;
  link: string;
  expiresAt: Date;
}

export function receiptMail(input: { orgName: string; customerName: string } & DownloadLinkLine): RenderedMail {
  const greeting = input.customerName ? `Hello ${input.customerName},` : 'Hello,';
  const subject = `Your download: ${input.productName}`;
  const text = [
    greeting,
    '',
    `Thank you for your purchase of ${input.productName} from ${input.orgName}.`,
    '',
    'Download it here:',
    input.link,
    '',
    `The link is valid until ${formatExpiry(input.expiresAt)}; opening it extends it by 48 hours.`,
    'If it has expired, request a fresh one from the link page.',
    '',
    `— ${input.orgName}`,
  ].join('\n');
  const html = htmlPage(subject,
    `<p>${escapeHtml(greeting)}</p>` +
    `<p>Thank you for your purchase of <strong>${escapeHtml(input.productName)}</strong> from ${escapeHtml(input.orgName)}.</p>` +
    `<p><a href="${escapeHtml(input.link)}" style="display:inline-block;padding:10px 16px;background:#1d4ed8;color:#fff;text-decoration:none;border-radius:6px">Download ${escapeHtml(input.productName)}</a></p>` +
    `<p>Or copy this link: ${escapeHtml(input.link)}</p>` +
    `<p>The link is valid until ${escapeHtml(formatExpiry(input.expiresAt))}; opening it extends it by 48 hours.</p>` +
    `<p>— ${escapeHtml(input.orgName)}</p>`);
  return { subject, text, html };
}

export function freshLinksMail(input: { orgName: string; links: DownloadLinkLine[] }): RenderedMail {
  const subject = `Your download links from ${input.orgName}`;
  const text = [
    'Hello,',
    '',
    `Here are fresh download links for your purchases from ${input.orgName}:`,
    '',
    ...input.links.flatMap((l) => [`${l.productName}`, l.link, `valid until ${formatExpiry(l.expiresAt)}`, '']),
    'If you did not ask for these links, you can ignore this email.',
  ].join('\n');
  const items = input.links
    .map((l) => `<li><a href="${escapeHtml(l.link)}">${escapeHtml(l.productName)}</a> — valid until ${escapeHtml(formatExpiry(l.expiresAt))}</li>`)
    .join('');
  const html = htmlPage(subject,
    `<p>Hello,</p><p>Here are fresh download links for your purchases from ${escapeHtml(input.orgName)}:</p><ul>${items}</ul>` +
    '<p>If you did not ask for these links, you can ignore this email.</p>');
  return { subject, text, html };
}

export function orderAlertMail(input: {
  orgName: string;
  platform: string;
  externalOrderId: string;
  lines: Array<{ sku: string | null; reason: string | null }>;
  logUrl: string;
}): RenderedMail {
  const subject = `Order ${input.externalOrderId} from ${input.platform} could not be fulfilled`;
  const lineText = input.lines.map((l) => `- SKU ${l.sku ?? '(none)'}: ${l.reason ?? 'unknown reason'}`);
  const text = [
    `No product of order ${input.externalOrderId} from ${input.platform} reached the customer.`,
    '',
    ...lineText,
    '',
    `Webhook log: ${input.logUrl}`,
  ].join('\n');
  const items = input.lines
    .map((l) => `<li>SKU <code>${escapeHtml(l.sku ?? '(none)')}</code>: ${escapeHtml(l.reason ?? 'unknown reason')}</li>`)
    .join('');
  const html = htmlPage(subject,
    `<p>No product of order <strong>${escapeHtml(input.externalOrderId)}</strong> from <strong>${escapeHtml(input.platform)}</strong> reached the customer (${escapeHtml(input.orgName)}).</p>` +
    `<ul>${items}</ul><p><a href="${escapeHtml(input.logUrl)}">Open the webhook log</a></p>`);
  return { subject, text, html };
}
