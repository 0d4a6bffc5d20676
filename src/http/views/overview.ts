import type { DayCount, Overview } from '../../services/overview';
import { dispatchBacklogBanner } from './components';
import { html, type SafeHtml } from '../../templating/html';
import { page, type PageContext } from './layout';

const W = 720;
const H = 240;
const PAD = { left: 36, right: 8, top: 12, bottom: 28 };

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/** A round, even upper bound for the y axis (2, 4, 10, 20, 40, 100 ...), so its middle line is a whole number. */
function axisMax(value: number): number {
  let magnitude = 1;
  for (;;) {
    for (const step of [2, 4, 10]) if (value <= step * magnitude) return step * magnitude;
    magnitude *= 10;
  }
}

/**
 * Sales and downloads per day as grouped bars, drawn on the server (no chart library, no script).
 * The same figures follow as a table for screen readers and for copying.
 */
export function dailyChart(days: DayCount[]): SafeHtml {
  const max = axisMax(Math.max(...days.map((d) => Math.max(d.sales, d.downloads)), 0));
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const slot = plotW / days.length;
  const bar = Math.max(1, (slot - 4) / 2);
  const y = (v: number) => PAD.top + plotH - (v / max) * plotH;
  const fmt = (n: number) => n.toFixed(1);

  const grid = [0, max / 2, max].map((v) => html`
    <line class="grid" x1="${PAD.left}" x2="${W - PAD.right}" y1="${fmt(y(v))}" y2="${fmt(y(v))}"></line>
    <text class="axis" x="${PAD.left - 6}" y="${fmt(y(v) + 4)}" text-anchor="end">${v}</text>`);
  const bars = days.map((d, i) => {
    const x = PAD.left + i * slot + 2;
    return html`<g><title>${d.day}: ${plural(d.sales, 'sale')}, ${plural(d.downloads, 'download')}</title>
      <rect class="bar-sales" x="${fmt(x)}" y="${fmt(y(d.sales))}" width="${fmt(bar)}" height="${fmt(y(0) - y(d.sales))}"></rect>
      <rect class="bar-downloads" x="${fmt(x + bar)}" y="${fmt(y(d.downloads))}" width="${fmt(bar)}" height="${fmt(y(0) - y(d.downloads))}"></rect></g>`;
  });
  const labels = days.map((d, i) => (i % 5 === 0 || i === days.length - 1)
    ? html`<text class="axis" x="${fmt(PAD.left + i * slot + slot / 2)}" y="${H - 8}" text-anchor="middle">${d.day.slice(5)}</text>`
    : '');
  const totals = days.reduce((t, d) => ({ sales: t.sales + d.sales, downloads: t.downloads + d.downloads }), { sales: 0, downloads: 0 });

  return html`<figure class="chart">
  <figcaption id="chart-title">Sales and downloads per day, last ${days.length} days (UTC):
    <span class="legend legend-sales">${plural(totals.sales, 'sale')}</span>
    <span class="legend legend-downloads">${plural(totals.downloads, 'download')}</span></figcaption>
  <svg viewBox="0 0 ${W} ${H}" role="img" aria-labelledby="chart-title" preserveAspectRatio="xMidYMid meet">
    ${grid}${bars}${labels}
  </svg>
  <details>
    <summary>Show the figures as a table</summary>
    <div class="table-wrap"><table>
      <caption class="visually-hidden">Sales and downloads per day</caption>
      <thead><tr><th scope="col">Day</th><th scope="col">Sales</th><th scope="col">Downloads</th></tr></thead>
      <tbody>${days.map((d) => html`<tr><th scope="row">${d.day}</th><td>${d.sales}</td><td>${d.downloads}</td></tr>`)}</tbody>
    </table></div>
  </details>
</figure>`;
}

export function overviewPage(ctx: PageContext, o: Overview): string {
  const rate = o.successRate === null ? '—' : `${(o.successRate * 100).toFixed(1)} %`;
  const finished = o.deliveries.success + o.deliveries.error;
  return page(ctx, {
    title: 'Overview',
    nav: 'overview',
    body: html`${dispatchBacklogBanner(o.backlog)}
<section aria-label="Key figures" class="cards">
  <div class="card"><h2>Delivery success rate</h2><p class="figure" data-testid="success-rate">${rate}</p>
    <p class="muted small">${o.deliveries.success} of ${finished} finished webhook deliveries in 30 days;
    ${o.deliveries.held} held, ${o.deliveries.pending} pending.</p></div>
  <div class="card"><h2>Unmatched SKUs</h2><p class="figure" data-testid="unmatched-count">${o.unmatchedSkus}</p>
    <p class="muted small"><a href="/purchases#unmatched">See which SKUs</a> or
    <a href="/webhooks-log?status=Error">the failed deliveries</a>.</p></div>
  <div class="card"><h2>Sales, 30 days</h2><p class="figure">${o.days.reduce((n, d) => n + d.sales, 0)}</p>
    <p class="muted small"><a href="/purchases">All purchases</a></p></div>
</section>
<section aria-label="Activity">${dailyChart(o.days)}</section>`,
  });
}
