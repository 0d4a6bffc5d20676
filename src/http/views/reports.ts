import { html } from '../../templating/html';
import { page, type PageContext } from './layout';

const day = (d: Date): string => d.toISOString().slice(0, 10);

/** A plain GET form to the API: the browser downloads the CSV with the session cookie (no state changes, no CSRF). */
export function reportsPage(ctx: PageContext, now: Date): string {
  const to = day(now);
  const from = day(new Date(now.getTime() - 29 * 86_400_000));
  return page(ctx, {
    title: 'Reports',
    nav: 'reports',
    body: html`
<section class="panel" aria-labelledby="downloads-heading">
  <h2 id="downloads-heading">Downloads</h2>
  <p>One row per completed file download in the range: when, which product, version and file, which customer, bytes.
    Days are UTC, both ends included.</p>
  <form method="get" action="/api/reports/downloads" class="row">
    <div><label for="from">From</label><input id="from" name="from" type="date" value="${from}" required></div>
    <div><label for="to">To</label><input id="to" name="to" type="date" value="${to}" required></div>
    <div><button type="submit" class="primary">Download CSV</button></div>
  </form>
</section>`,
  });
}
