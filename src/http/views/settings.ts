import type { DevMail } from '../../dev/dev-mailbox';
import type { Role } from '../../domain/statuses';
import type { ApiKeyInfo } from '../../services/api-keys';
import type { AttemptJson, EndpointJson } from '../../events/outbound-events';
import { EVENT_TYPES, type EventType } from '../../domain/outbound-events';
import type { RefusalReason } from '../../domain/integration-health';
import type { IntegrationHealthJson, IntegrationListItem } from '../../services/integration-settings';
import type { OrganisationSettings } from '../../services/organisation-settings';
import { lifetimeWords } from '../../domain/download-links';
import { MAX_REMINDER_AFTER_MINUTES, MIN_REMINDER_AFTER_MINUTES } from '../../domain/reminder';
import type { TeamMember } from '../../services/team';
import type { ActiveSession } from '../../services/user-sessions';
import { MIN_PASSWORD_LENGTH } from '../../security/password-policy';
import type { Platform } from '../../domain/platforms';
import type { ReconciliationJson } from '../../services/reconciliation';
import type { OrderListClient } from '../../webhooks/order-list';
import { adapters } from '../../webhooks/registry';
import { badge, emptyRow, resultRegion, statusLine, when } from './components';
import { flag, html, type SafeHtml } from '../../templating/html';
import { csrfField, notice, page, type PageContext } from './layout';

type SettingsTab = 'api-key' | 'password' | 'sessions' | 'organisation' | 'integrations' | 'webhooks' | 'team' | 'mailbox';

function settingsPage(ctx: PageContext, tab: SettingsTab, title: string, body: SafeHtml): string {
  const tabs: Array<{ key: SettingsTab; href: string; label: string; show: boolean }> = [
    { key: 'api-key', href: '/settings/api-key', label: 'API Key', show: true },
    { key: 'password', href: '/settings/password', label: 'Password', show: true },
    { key: 'sessions', href: '/settings/sessions', label: 'Sessions', show: true },
    { key: 'organisation', href: '/settings/organisation', label: 'Organisation', show: ctx.isAdmin },
    { key: 'integrations', href: '/settings/integrations', label: 'Integrations', show: ctx.isAdmin },
    { key: 'webhooks', href: '/settings/webhooks', label: 'Webhooks', show: ctx.isAdmin },
    { key: 'team', href: '/settings/team', label: 'Team', show: ctx.isAdmin },
    { key: 'mailbox', href: '/settings/mailbox', label: 'Dev mailbox', show: ctx.isAdmin && ctx.hasDevMailbox },
  ];
  return page(ctx, {
    title: `Settings: ${title}`,
    nav: 'settings',
    body: html`<nav aria-label="Settings"><ul class="subnav">${tabs.filter((t) => t.show).map((t) =>
      html`<li><a href="${t.href}"${t.key === tab ? html` aria-current="page"` : ''}>${t.label}</a></li>`)}</ul></nav>
${body}`,
  });
}

/** Where the page shows a secret the server answers once (`#{id}`, filled in by app.js), with a Copy button. */
function shownOnceBox(id: string, what: string, label: string): SafeHtml {
  return html`<div id="${id}-box" hidden>
    <p><strong>Copy ${what} now: it is shown only this once.</strong></p>
    <div class="copy-row"><output id="${id}" class="secret" aria-label="${label}"></output>
      <button type="button" data-copy="${id}">Copy</button></div>
  </div>`;
}

export function apiKeyPage(ctx: PageContext, key: ApiKeyInfo): string {
  return settingsPage(ctx, 'api-key', 'API Key', html`
<section class="panel" aria-labelledby="key-heading">
  <h2 id="key-heading">Your API key</h2>
  <p>Your key starts with <code data-testid="key-prefix">${key.prefix}</code>. Last used: ${when(key.lastUsedAt)}.</p>
  <p class="muted small">Send it as <code>Authorization: Bearer &lt;key&gt;</code> or <code>X-API-Key: &lt;key&gt;</code>.
    It has your role (${ctx.user.role}). Only a hash is stored, so a lost key cannot be shown again: refresh it instead.</p>
  <form data-json action="/api/settings/api-key/refresh" data-show="apiKey" data-show-in="new-key"
        data-done="Your new key is below. The previous key no longer works."
        data-confirm="Refresh your API key? The current key stops working at once.">
    <button type="submit" class="primary">Refresh key</button>
    ${statusLine()}
  </form>
  ${shownOnceBox('new-key', 'your new key', 'New API key')}
</section>`);
}

export function passwordPage(ctx: PageContext, changed: boolean): string {
  return settingsPage(ctx, 'password', 'Password', html`
<section class="panel" aria-labelledby="pw-heading">
  <h2 id="pw-heading">Change your password</h2>
  ${changed ? notice('Your password was changed. Your other sessions have been signed out.') : ''}
  <form method="post" action="/settings/password" hx-post="/settings/password" hx-target="#password-result" class="stack">
    ${csrfField(ctx)}
    <input type="text" name="username" autocomplete="username" value="${ctx.user.email}" hidden>
    <label for="current">Current password</label>
    <input id="current" name="current" type="password" autocomplete="current-password" required>
    <label for="new-password">New password <span class="hint">At least ${MIN_PASSWORD_LENGTH} characters, not a common one.</span></label>
    <input id="new-password" name="password" type="password" autocomplete="new-password" minlength="${MIN_PASSWORD_LENGTH}" required>
    <label for="confirm">Repeat the new password</label>
    <input id="confirm" name="confirm" type="password" autocomplete="new-password" minlength="${MIN_PASSWORD_LENGTH}" required>
    <button type="submit" class="primary">Change password</button>
  </form>
  ${resultRegion('password-result')}
</section>`);
}

export function sessionsPage(ctx: PageContext, sessions: ActiveSession[], currentId: string): string {
  return settingsPage(ctx, 'sessions', 'Sessions', html`
<section aria-labelledby="sessions-heading">
  <h2 id="sessions-heading">Where you are signed in</h2>
  <p class="muted small">A session ends when you sign out, after a while without use, or at the latest 12 hours after signing in.</p>
  <div class="table-wrap"><table>
    <thead><tr><th scope="col">Browser</th><th scope="col">Signed in</th><th scope="col">Last used</th></tr></thead>
    <tbody>${sessions.length === 0 ? emptyRow(3, 'No open session.') : sessions.map((s) => html`<tr data-session="${s.id === currentId ? 'current' : 'other'}">
      <td>${s.userAgent ?? 'unknown'}${s.id === currentId ? html` <span class="muted">(this session)</span>` : ''}</td>
      <td>${when(s.createdAt)}</td><td>${when(s.lastSeenAt)}</td></tr>`)}</tbody>
  </table></div>
</section>
<section class="panel" aria-labelledby="everywhere-heading">
  <h2 id="everywhere-heading">Sign out everywhere</h2>
  <p>Ends every session of your account, this one included: on a lost phone, a shared computer, or when in doubt.</p>
  <form method="post" action="/settings/sessions/end-all">
    ${csrfField(ctx)}
    <button type="submit" class="danger">Sign out everywhere</button>
  </form>
</section>`);
}

export function organisationPage(ctx: PageContext, settings: OrganisationSettings, saved: boolean): string {
  return settingsPage(ctx, 'organisation', 'Organisation', html`
<section class="panel" aria-labelledby="support-heading">
  <h2 id="support-heading">Support address</h2>
  ${saved ? notice('Saved.') : ''}
  <p>Buyers who reach a product's download limit are shown this address to ask for more downloads. Without one, the page
    only says that the limit is reached.</p>
  <p data-testid="support-email">Now: ${settings.supportEmail === null ? html`<span class="muted">none set</span>` : html`<strong>${settings.supportEmail}</strong>`}</p>
  <form method="post" action="/settings/organisation" hx-post="/settings/organisation" hx-target="#organisation-result" class="stack">
    ${csrfField(ctx)}
    <label for="support-email">Support email <span class="hint">Leave it empty to show no address.</span></label>
    <input id="support-email" name="supportEmail" type="email" maxlength="254" autocomplete="off" value="${settings.supportEmail ?? ''}">
    <button type="submit" class="primary">Save</button>
  </form>
  ${resultRegion('organisation-result')}
</section>
${reminderPanel(ctx, settings)}`);
}

/** The buyer reminder's delay (decisions §16): in minutes, as the API takes it; empty turns reminders off. */
function reminderPanel(ctx: PageContext, settings: OrganisationSettings): SafeHtml {
  const minutes = settings.reminderAfterMinutes;
  return html`<section class="panel" aria-labelledby="reminder-heading">
  <h2 id="reminder-heading">Download reminders</h2>
  <p>A buyer who has not downloaded anything this long after the receipt went out gets one reminder email with a fresh
    link. Test purchases, revoked purchases and buyers who turned off your emails get none. A change applies to purchases
    whose receipts go out after it.</p>
  <p data-testid="reminder-after">Now: ${minutes === null
    ? html`<span class="muted">off</span>`
    : html`<strong>${lifetimeWords(minutes * 60_000)}</strong> after the receipt`}</p>
  <form method="post" action="/settings/organisation/reminders" hx-post="/settings/organisation/reminders" hx-target="#reminder-result" class="stack">
    ${csrfField(ctx)}
    <label for="reminder-after-minutes">Remind after (minutes) <span class="hint">1440 is a day, 4320 three days; leave it empty for no reminders.</span></label>
    <input id="reminder-after-minutes" class="short" name="reminderAfterMinutes" type="number" min="${String(MIN_REMINDER_AFTER_MINUTES)}"
      max="${String(MAX_REMINDER_AFTER_MINUTES)}" step="1" inputmode="numeric" value="${minutes === null ? '' : String(minutes)}">
    <button type="submit" class="primary">Save</button>
  </form>
  ${resultRegion('reminder-result')}
</section>`;
}

/** What a seller does about each refusal (the README's Webhooks section says more). */
const REFUSAL_ADVICE: Record<RefusalReason, string> = {
  'signature mismatch': 'the secret saved here differs from the one the platform signs with: copy it again from the platform',
  'signature header missing': 'the request carried no signature: check that the URL belongs to this platform (cart-e: that it ends with ?secret=)',
  'timestamp outside tolerance': 'the signature was more than 5 minutes old or ahead: the delivery came late, or a clock is wrong',
  'signed value replayed': 'a signature already used with another body was sent again: nothing to do if it was not sent by the platform',
  'integration not configured': 'deliveries arrive but no secret is saved: set it below',
  'body too large': 'the body was over 1 MiB: an order notification should be far smaller',
  'body unreadable': 'the signature was good but the body could not be read: the platform sends a format this service does not know',
};

/** The integration's deliveries lately: last verified, last refused and why, and the 24-hour counts. */
function healthPart(id: string, health: IntegrationHealthJson): SafeHtml {
  if (health.lastVerifiedAt === null && health.lastRefusedAt === null) {
    return html`<p class="muted small" data-testid="${id}-health">Deliveries: no deliveries yet.</p>`;
  }
  const reason = health.lastRefusalReason;
  return html`<dl class="facts" data-testid="${id}-health">
    <dt>Last verified delivery</dt><dd data-health="last-verified">${when(health.lastVerifiedAt)}</dd>
    <dt>Last refusal</dt><dd data-health="last-refused">${health.lastRefusedAt === null ? html`<span class="muted">none</span>`
      : html`${when(health.lastRefusedAt)} ${reason === null ? '' : html`${badge('error', reason)} <span class="muted small">${REFUSAL_ADVICE[reason]}.</span>`}`}</dd>
    <dt>Last 24 hours</dt><dd data-health="counts">${health.verified24h} verified, ${health.refused24h} refused</dd>
  </dl>`;
}

const RECONCILIATION_STATE = {
  active: badge('success', 'on'),
  paused: badge('error', 'paused'),
  off: badge('pending', 'off'),
} as const;

/**
 * Missed-webhook reconciliation of a platform with an order-list client (decisions §15): its state,
 * the last run and the next, and the form for its read-only credentials (never shown again).
 */
function reconciliationPart(id: string, part: IntegrationReconciliation): SafeHtml {
  const { client, settings } = part;
  const result = settings.lastResult;
  const stored = settings.apiBaseUrl !== null;
  return html`<details class="reconciliation" data-testid="${id}-reconciliation"${settings.state === 'paused' ? html` open` : ''}>
  <summary>Reconciliation ${RECONCILIATION_STATE[settings.state]}</summary>
  <p class="muted small">Reads ${id}'s order list regularly and fulfils the paid orders no webhook brought; orders already
    received change nothing. Grant ${client.scope} only.</p>
  <dl class="facts">
    ${settings.state === 'paused' ? html`<dt>Paused</dt><dd>${settings.pausedReason ?? ''}: save the credentials again to resume.</dd>` : ''}
    <dt>Last run</dt><dd>${settings.lastRunAt === null ? html`<span class="muted">none yet</span>` : html`${when(settings.lastRunAt)}${result
      ? html`: ${result.pulled} read, ${result.recovered} recovered, ${result.alreadyKnown} already known, ${result.errors} errors` : ''}`}</dd>
    <dt>Next run</dt><dd>${settings.nextRunAt === null ? html`<span class="muted">none</span>` : when(settings.nextRunAt)}</dd>
  </dl>
  <form data-json data-method="PUT" action="/api/settings/integrations/${id}/reconciliation" data-done="Saved: ${id} reconciliation.">
    <label for="${id}-reconcile-enabled">Reconciliation</label>
    <select id="${id}-reconcile-enabled" name="enabled" data-type="boolean">
      <option value="true"${flag(settings.enabled, 'selected')}>On</option>
      <option value="false"${flag(!settings.enabled, 'selected')}>Off</option>
    </select>
    ${client.credentialFields.map((f) => html`<label for="${id}-reconcile-${f.field}">${f.label}${stored ? html` <span class="hint">empty: keep the saved one</span>` : ''}</label>
    <input id="${id}-reconcile-${f.field}" name="${f.field}" type="${f.secret ? 'password' : 'text'}" autocomplete="off" maxlength="500">`)}
    <label for="${id}-reconcile-origin">API address <span class="hint">https://host[:port] only; empty: ${stored
      ? 'keep the saved one (the platform\'s own follows a new shop domain)' : 'the platform\'s public API (a shop on its own site must name it)'}</span></label>
    <input id="${id}-reconcile-origin" name="apiBaseUrl" type="url" autocomplete="off" maxlength="2048"${stored ? html` placeholder="${settings.apiBaseUrl ?? ''}"` : ''}>
    <div class="actions"><button type="submit">Save</button></div>
    ${statusLine()}
  </form>
  ${settings.state === 'active' ? html`<form data-json data-method="POST" action="/api/settings/integrations/${id}/reconciliation/run" data-done="A run started: its result shows here when it ends.">
    <div class="actions"><button type="submit">Run now</button></div>
    ${statusLine()}
  </form>` : ''}
</details>`;
}

function integrationPanel(i: IntegrationListItem, reconciliation: IntegrationReconciliation | undefined): SafeHtml {
  const id = i.platform;
  const { secretField: secret, routing } = adapters[i.platform];
  return html`<section class="panel" aria-labelledby="${id}-heading" data-platform="${id}">
  <h2 id="${id}-heading">${id} ${i.configured ? badge('success', 'configured') : badge('pending', 'not configured')}</h2>
  ${healthPart(id, i.health)}
  <label for="${id}-url">Webhook URL</label>
  <div class="copy-row"><input id="${id}-url" value="${i.webhookUrl}" readonly>
    <button type="button" data-copy="${id}-url" aria-label="Copy the ${id} webhook URL">Copy</button></div>
  ${i.note ? html`<p class="muted small">Note: ${i.note}.</p>` : ''}
  <form data-json data-method="PUT" action="/api/settings/integrations/${id}" data-done="Saved: the ${id} integration is configured.">
    <label for="${id}-secret">${secret.label}</label>
    <input id="${id}-secret" name="${secret.field}" type="password" autocomplete="off" required>
    ${routing.kind === 'shared' ? html`<label for="${id}-account">Account id <span class="hint">${routing.accountIdHint}</span></label>
    <input id="${id}-account" name="accountId" autocomplete="off">` : ''}
    <div class="actions"><button type="submit">${i.configured ? 'Rotate secret' : 'Set secret'}</button></div>
    ${statusLine()}
  </form>
  ${reconciliation ? reconciliationPart(id, reconciliation) : ''}
</section>`;
}

/** A platform that can be reconciled: its order-list client, and its settings. */
export interface IntegrationReconciliation {
  client: Pick<OrderListClient, 'scope' | 'credentialFields'>;
  settings: ReconciliationJson;
}

export function integrationsPage(
  ctx: PageContext, integrations: IntegrationListItem[], reconciliations: Partial<Record<Platform, IntegrationReconciliation>>,
): string {
  return settingsPage(ctx, 'integrations', 'Integrations', html`
<p>Give each sales platform its webhook URL, and enter here the secret it signs with. Secrets are never shown again;
  saving a new one replaces the old one at once.</p>
${integrations.map((i) => integrationPanel(i, reconciliations[i.platform]))}`);
}

/** One attempt: status (or why none came), latency, the answer's excerpt, and a redeliver button for kept events. */
function attemptRow(endpoint: EndpointJson, a: AttemptJson): SafeHtml {
  const ok = a.error === null;
  return html`<tr data-attempt="${a.id}">
  <td>${when(a.at)}</td><td><code>${a.type}</code> <span class="muted small">#${a.attempt}</span></td>
  <td>${badge(ok ? 'success' : 'error', a.status === null ? 'no answer' : String(a.status))}${a.error ? html` <span class="small">${a.error}</span>` : ''}</td>
  <td>${a.durationMs} ms</td>
  <td><code class="small excerpt">${a.responseExcerpt}</code></td>
  <td>${a.type === 'ping' ? '' : html`<form data-json action="/api/events/${a.eventId}/redeliver" data-done="Sent again.">
    <input type="hidden" name="endpointId" value="${endpoint.id}">
    <button type="submit"${flag(!endpoint.enabled, 'disabled')}>Redeliver</button>${statusLine()}</form>`}</td></tr>`;
}

/** A checkbox per event type; none ticked means every type (and the types added later). */
function eventTypePicker(idPrefix: string, ticked: readonly EventType[]): SafeHtml {
  return html`<fieldset class="event-types"><legend>Events <span class="hint">None ticked: every event type, including those added later.</span></legend>
    ${EVENT_TYPES.map((type) => html`<label><input type="checkbox" id="${idPrefix}-${type}" name="events" value="${type}" data-type="list"${flag(ticked.includes(type), 'checked')}> <code>${type}</code></label>`)}
  </fieldset>`;
}

function endpointPanel(e: EndpointJson, attempts: AttemptJson[]): SafeHtml {
  return html`<section class="panel" aria-labelledby="endpoint-${e.id}-heading" data-endpoint="${e.id}">
  <h2 id="endpoint-${e.id}-heading"><code>${e.url}</code> ${e.enabled ? badge('success', 'enabled') : badge('error', 'disabled')}</h2>
  ${e.disabledReason ? html`<p class="small" data-testid="disabled-reason">Disabled: ${e.disabledReason}.</p>` : ''}
  <p class="muted small">${e.description ? html`<span data-testid="description">${e.description}</span>.` : 'No description.'} Events: ${e.events.length === 0 ? 'all' : e.events.join(', ')}. Added ${when(e.createdAt)}.</p>
  <div class="actions">
    <form data-json action="/api/webhook-endpoints/${e.id}/test" data-done="Test sent ({durationMs} ms): its attempt is below.">
      <button type="submit">Send test</button>${statusLine()}</form>
    <form data-json data-method="PATCH" action="/api/webhook-endpoints/${e.id}" data-done="${e.enabled ? 'Disabled.' : 'Enabled.'}">
      <input type="hidden" name="enabled" value="${e.enabled ? 'false' : 'true'}" data-type="boolean">
      <button type="submit">${e.enabled ? 'Disable' : 'Enable'}</button>${statusLine()}</form>
    <form data-json action="/api/webhook-endpoints/${e.id}/rotate-secret" data-show="secret" data-show-in="secret-${e.id}"
          data-confirm="Rotate the secret? For 24 hours both the old and the new secret sign every request."
          data-done="Your new secret is below. Both secrets sign for 24 hours.">
      <button type="submit">Rotate secret</button>${statusLine()}</form>
    <form data-json data-method="DELETE" action="/api/webhook-endpoints/${e.id}" data-done="Deleted."
          data-confirm="Delete this endpoint? Its attempts go with it.">
      <button type="submit" class="danger">Delete</button>${statusLine()}</form>
  </div>
  <details><summary>Change the events sent</summary>
    <form data-json data-method="PATCH" action="/api/webhook-endpoints/${e.id}" data-done="Events saved." class="stack">
      ${eventTypePicker(`events-${e.id}`, e.events)}
      <button type="submit">Save events</button>${statusLine()}</form>
  </details>
  <div id="secret-${e.id}-box" hidden><p><strong>Copy the new secret now: it is shown only this once.</strong></p>
    <div class="copy-row"><output id="secret-${e.id}" class="secret" aria-label="New signing secret"></output>
      <button type="button" data-copy="secret-${e.id}">Copy</button></div></div>
  <h3>Latest attempts</h3>
  <div class="table-wrap"><table>
    <thead><tr><th scope="col">At</th><th scope="col">Event</th><th scope="col">Answer</th><th scope="col">Latency</th>
      <th scope="col">Answer's first 1 KB</th><th scope="col"></th></tr></thead>
    <tbody>${attempts.length === 0 ? emptyRow(6, 'Nothing sent yet.') : attempts.map((a) => attemptRow(e, a))}</tbody>
  </table></div>
</section>`;
}

/** Settings › Webhooks: integrators' endpoints for outbound events, each with its latest attempts. */
export function webhooksPage(ctx: PageContext, endpoints: Array<{ endpoint: EndpointJson; attempts: AttemptJson[] }>): string {
  return settingsPage(ctx, 'webhooks', 'Webhooks', html`
<p>Send signed events (purchases, revocations, failed receipts, downloads, failed deliveries) to your own servers, as
  <a href="https://www.standardwebhooks.com/">Standard Webhooks</a>. Addresses must be <code>https://</code> and public.</p>
<section class="panel" aria-labelledby="add-endpoint-heading">
  <h2 id="add-endpoint-heading">Add an endpoint</h2>
  <form data-json action="/api/webhook-endpoints" data-show="secret" data-show-in="new-secret" class="stack"
        data-done="Endpoint added. Copy its secret below, then reload the page to see it in the list.">
    <label for="endpoint-url">URL</label>
    <input id="endpoint-url" name="url" type="url" required placeholder="https://example.com/hooks/delivery">
    <label for="endpoint-description">Description <span class="hint">Optional.</span></label>
    <input id="endpoint-description" name="description" maxlength="500">
    ${eventTypePicker('new-endpoint', [])}
    <button type="submit" class="primary">Add endpoint</button>
    ${statusLine()}
  </form>
  ${shownOnceBox('new-secret', 'the signing secret', 'Signing secret')}
</section>
${endpoints.length === 0 ? html`<p class="muted">No endpoint yet.</p>` : endpoints.map(({ endpoint, attempts }) => endpointPanel(endpoint, attempts))}`);
}

function roleOptions(roles: Role[], current: Role): SafeHtml[] {
  return roles.map((r) => html`<option value="${r}"${flag(r === current, 'selected')}>${r}</option>`);
}

export interface TeamRow extends TeamMember {
  /** Roles this viewer may set for the row; empty: read only. */
  settable: Role[];
  /** This viewer may remove the person from the organisation. */
  removable: boolean;
}

export function teamPage(ctx: PageContext, team: TeamRow[], grantable: Role[]): string {
  return settingsPage(ctx, 'team', 'Team', html`
<section aria-labelledby="team-heading">
  <h2 id="team-heading">People in ${ctx.user.orgName ?? 'your organisation'}</h2>
  <p class="muted small">Owners and admins manage products, sales and settings; members use products, sales, customers and the
    webhook log, and have their own API key.</p>
  <div class="table-wrap"><table>
    <thead><tr><th scope="col">Email</th><th scope="col">Name</th><th scope="col">Role</th><th scope="col">Added</th><th scope="col"><span class="visually-hidden">Remove</span></th></tr></thead>
    <tbody>${team.length === 0 ? emptyRow(5, 'Nobody yet.') : team.map((m) => html`<tr data-user="${m.email}">
      <td>${m.email}${m.id === ctx.user.id ? html` <span class="muted">(you)</span>` : ''}</td>
      <td>${m.name}</td>
      <td>${m.settable.length === 0 ? badge(m.role === 'owner' ? 'published' : 'pending', m.role) : html`
        <form class="row" hx-post="/settings/team/${m.id}/role" hx-target="#role-result-${m.id}">
          ${csrfField(ctx)}
          <label class="visually-hidden" for="role-${m.id}">Role of ${m.email}</label>
          <select id="role-${m.id}" name="role">${roleOptions(m.settable, m.role)}</select>
          <button type="submit">Set role</button>
        </form><div id="role-result-${m.id}" aria-live="polite"></div>`}</td>
      <td>${when(m.createdAt)}</td>
      <td>${m.removable && html`<form hx-post="/settings/team/${m.id}/remove" hx-target="#role-result-${m.id}"
          hx-confirm="Remove ${m.email} from the organisation? Their sessions end and their API key stops working at once.">
          ${csrfField(ctx)}<button type="submit" class="danger" aria-label="Remove ${m.email}">Remove</button></form>`}</td></tr>`)}</tbody>
  </table></div>
</section>
<section class="panel" aria-labelledby="add-heading">
  <h2 id="add-heading">Add a person</h2>
  <form hx-post="/settings/team" hx-target="#add-result" class="stack" method="post" action="/settings/team">
    ${csrfField(ctx)}
    <label for="new-email">Email</label><input id="new-email" name="email" type="email" autocomplete="off" required>
    <label for="new-name">Name</label><input id="new-name" name="name" autocomplete="off">
    <label for="new-role">Role</label><select id="new-role" name="role">${roleOptions(grantable, 'member')}</select>
    <label for="new-password">First password <span class="hint">At least ${MIN_PASSWORD_LENGTH} characters; tell it to them, they change it under Settings, Password.</span></label>
    <input id="new-password" name="password" type="password" autocomplete="new-password" minlength="${MIN_PASSWORD_LENGTH}" required>
    <button type="submit" class="primary">Add</button>
  </form>
  ${resultRegion('add-result')}
</section>`);
}

export function mailboxPage(ctx: PageContext, mails: DevMail[]): string {
  return settingsPage(ctx, 'mailbox', 'Dev mailbox', html`
<p>Every email the service sent while running with the embedded dev mailbox (no <code>SMTP_URL</code>), newest first.
  Nothing here left this machine.</p>
<div class="table-wrap"><table>
  <thead><tr><th scope="col">Received</th><th scope="col">To</th><th scope="col">Subject</th></tr></thead>
  <tbody>${mails.length === 0 ? emptyRow(3, 'No email yet.') : mails.map((m) => html`<tr>
    <td>${when(m.receivedAt)}</td><td>${m.to.join(', ')}</td>
    <td><a href="/settings/mailbox/${m.id}">${m.subject || '(no subject)'}</a></td></tr>`)}</tbody>
</table></div>`);
}

export function mailPage(ctx: PageContext, mail: DevMail): string {
  return settingsPage(ctx, 'mailbox', mail.subject || '(no subject)', html`
<p><a href="/settings/mailbox">Back to the mailbox</a></p>
<dl class="panel">
  <dt>From</dt><dd>${mail.from}</dd><dt>To</dt><dd>${mail.to.join(', ')}</dd><dt>Received</dt><dd>${when(mail.receivedAt)}</dd>
</dl>
<h2>Text</h2>
<div class="mail-body">${mail.text}</div>
${mail.html ? html`<h2>HTML</h2>
<iframe class="mail-html" title="The HTML part of the email" sandbox src="/settings/mailbox/${mail.id}/html"></iframe>` : ''}`);
}
