import { CSRF_FIELD } from '../plugins/session';
import { barePage } from './layout';
import { html } from '../../templating/html';

export interface SigninView {
  token: string;
  next: string;
  email?: string;
  error?: string;
}

/** The sign-in form (decisions §8: fields labelled "Email" and "Password"). No sign-up: the CLI creates organisations. */
export function signinPage(v: SigninView): string {
  return barePage('Sign in', html`
<h1>Sign in</h1>
<p class="muted">Digital product delivery: dashboard for your organisation's staff.</p>
${v.error ? html`<div class="error" role="alert" id="signin-error">${v.error}</div>` : ''}
<form method="post" action="/signin" class="stack"${v.error ? html` aria-describedby="signin-error"` : ''}>
  <input type="hidden" name="${CSRF_FIELD}" value="${v.token}">
  <input type="hidden" name="next" value="${v.next}">
  <label for="email">Email</label>
  <input id="email" name="email" type="email" autocomplete="username" required value="${v.email ?? ''}"${v.email ? '' : html` autofocus`}>
  <label for="password">Password</label>
  <input id="password" name="password" type="password" autocomplete="current-password" required${v.email ? html` autofocus` : ''}>
  <button type="submit" class="primary">Sign in</button>
</form>
<p class="muted small">No account? Ask an owner or admin of your organisation to add you (Settings, Team).</p>`);
}
