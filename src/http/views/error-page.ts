import { html } from '../../templating/html';
import { barePage, page, type PageContext } from './layout';

const TITLES: Record<number, string> = {
  400: 'That did not work',
  401: 'Please sign in',
  403: 'Not allowed',
  404: 'Not found',
  409: 'Conflict',
  413: 'Too large',
  429: 'Too many requests',
};

/** A dashboard error as a whole page: with the navigation when someone is signed in. */
export function errorPage(ctx: PageContext | null, status: number, message: string): string {
  const title = TITLES[status] ?? (status >= 500 ? 'Something went wrong' : 'That did not work');
  const body = html`<div class="error" role="alert" data-status="${status}"><p>${message}</p></div>
<p>${status === 401 ? html`<a href="/signin">Sign in</a>` : html`<a href="/">Back to the overview</a>`}</p>`;
  return ctx ? page(ctx, { title, nav: null, body }) : barePage(title, html`<h1>${title}</h1>${body}`);
}
