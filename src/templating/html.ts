/**
 * The one way the service writes markup (dashboard, customer pages, fragments, emails): every
 * interpolated value is escaped unless it is SafeHtml, so user data (product names, emails, SKUs
 * from webhooks) cannot inject markup.
 */

export function escapeHtml(value: string): string {
  return value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

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

/** `true`/`false`/null render nothing, so `${cond && html`...`}` reads naturally. */
export function html(strings: TemplateStringsArray, ...values: Value[]): SafeHtml {
  let out = strings[0];
  for (let i = 0; i < values.length; i += 1) out += render(values[i]) + strings[i + 1];
  return new SafeHtml(out);
}

/** An attribute that is present or absent (`checked`, `selected`, `disabled`). */
export const flag = (on: boolean, name: string): SafeHtml => raw(on ? ` ${name}` : '');
