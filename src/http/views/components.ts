import { html, type SafeHtml } from './html';

/** A status word as a badge: the word itself carries the meaning, the colour only repeats it. */
export function badge(word: string, label: string = word): SafeHtml {
  return html`<span class="badge badge-${word.toLowerCase()}">${label}</span>`;
}

/** The polite region where a form's htmx answer (or error fragment) lands. */
export const resultRegion = (id: string): SafeHtml => html`<div id="${id}" aria-live="polite"></div>`;

/** The status line that app.js fills for JSON and upload forms. */
export const statusLine = (): SafeHtml => html`<div data-status hidden></div>`;

export function bytes(size: number): string {
  if (size < 1024) return `${size} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = size / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/** An empty-state row for a table of `columns` columns. */
export const emptyRow = (columns: number, text: string): SafeHtml =>
  html`<tr><td colspan="${columns}" class="muted">${text}</td></tr>`;
