import type { OutboxBacklog } from '../../services/workflow-outbox';
import { html, type SafeHtml } from '../../templating/html';

/**
 * A status word as a badge: the word itself carries the meaning, the colour only repeats it. Its
 * class is the word in lower case with hyphens for spaces (`not found` → `badge-not-found`).
 */
export function badge(word: string, label: string = word): SafeHtml {
  return html`<span class="badge badge-${word.toLowerCase().replace(/[^a-z0-9]+/g, '-')}">${label}</span>`;
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

function ageOf(seconds: number): string {
  if (seconds < 90) return `${seconds} s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min`;
  return `${Math.round(seconds / 3600)} h`;
}

/**
 * Deliveries recorded but not yet taken by the workflow engine (the outbox): nothing is lost, and
 * staff should know why entries stay Pending. Empty when nothing waits.
 */
export function dispatchBacklogBanner(backlog: OutboxBacklog): SafeHtml {
  if (backlog.waiting === 0) return html``;
  const what = backlog.waiting === 1 ? '1 fulfilment is' : `${backlog.waiting} fulfilments are`;
  return html`<div class="warn" role="status" data-testid="dispatch-backlog">
  <strong>${what} waiting for the workflow engine</strong> (oldest ${ageOf(backlog.oldestAgeSeconds)}).
  The orders are recorded and nothing is lost: they are fulfilled as soon as the engine answers.</div>`;
}

const DATE_TIME = new Intl.DateTimeFormat('en-GB', {
  year: 'numeric', month: 'short', day: '2-digit', hour: '2-digit', minute: '2-digit', timeZone: 'UTC',
});

/** A timestamp for people, in UTC (the server does not know the viewer's zone), with a machine-readable twin. */
export function when(date: Date | string | null): SafeHtml {
  if (date === null) return html`<span class="muted">never</span>`;
  const d = new Date(date);
  return html`<time datetime="${d.toISOString()}">${DATE_TIME.format(d)} UTC</time>`;
}
