import { escapeHtml } from '../../mail/templates';

/** Markup that is already safe: it passes through `html` unescaped. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/** Trusted markup from elsewhere (the purchase fragment, an SVG built here). */
export const raw = (markup: string): SafeHtml => new SafeHtml(markup);

type Value = SafeHtml | string | number | boolean | null | undefined | Value[];

function render(value: Value): string {
  if (value === null || value === undefined || value === false || value === true) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

/**
 * The dashboard's only way to write markup: every interpolated value is escaped unless it is
 * SafeHtml, so user data (product names, emails, SKUs from webhooks) cannot inject markup.
 * `true`/`false`/null render nothing, so `${cond && html`...`}` reads naturally.
 */
export function html(strings: TemplateStringsArray, ...values: Value[]): SafeHtml {
  let out = strings[0];
  for (let i = 0; i < values.length; i += 1) out += render(values[i]) + strings[i + 1];
  return new SafeHtml(out);
}

/** An attribute that is present or absent (`checked`, `selected`, `disabled`). */
export const flag = (on: boolean, name: string): SafeHtml => raw(on ? ` ${name}` : '');

const DATE_TIME = new Intl.DateTimeFormat('en-GB', {
  year: 'numeric', month: 'short', day: '2-digit', hour: '2-digit', minute: '2-digit', timeZone: 'UTC',
});

/** A timestamp for people, in UTC (the server does not know the viewer's zone), with a machine-readable twin. */
export function when(date: Date | string | null): SafeHtml {
  if (date === null) return html`<span class="muted">never</span>`;
  const d = new Date(date);
  return html`<time datetime="${d.toISOString()}">${DATE_TIME.format(d)} UTC</time>`;
}
