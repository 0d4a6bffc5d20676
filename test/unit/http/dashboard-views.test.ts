import { safeNext } from '../../../src/http/routes/dashboard/guard';
import { html, raw } from '../../../src/templating/html';
import { dailyChart } from '../../../src/http/views/overview';
import { isLive, licenseKeysText, licensePoolCounts, versionNoticesSection, whyNotLive, type VersionNotices } from '../../../src/http/views/products';
import { grantableRoles, mayChangeRoleOf } from '../../../src/services/team';
import type { ProductListing } from '../../../src/services/products';
import { badge } from '../../../src/http/views/components';
import type { PageContext } from '../../../src/http/views/layout';
import { purchaseDetailPage } from '../../../src/http/views/purchase-detail';
import { purchaseList, unmatchedPanel } from '../../../src/http/views/purchases';
import { unmatchedHref, unmatchedPage } from '../../../src/http/views/unmatched';
import type { HeldSale, HeldSales } from '../../../src/services/unmatched-replay';
import type { NotificationProgress } from '../../../src/services/version-notifications';
import { webhookLogPage, type LogEntry } from '../../../src/http/views/webhook-log';
import type { PurchaseRow } from '../../../src/purchases/purchase-store';
import type { EvidenceRecord } from '../../../src/domain/evidence';
import type { PurchaseDetail, PurchaseReminder } from '../../../src/services/purchase-detail';
import type { Role } from '../../../src/domain/statuses';

describe('html', () => {
  test('escapes every interpolated value, so data cannot inject markup', () => {
    const name = '<img src=x onerror="alert(1)">&\'';
    expect(html`<td title="${name}">${name}</td>`.value).toBe(
      '<td title="&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&amp;&#39;">&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&amp;&#39;</td>',
    );
  });

  test('passes SafeHtml through, joins arrays, and renders nothing for booleans and null', () => {
    const items = ['a<b', 'c'].map((x) => html`<li>${x}</li>`);
    expect(html`<ul>${items}</ul>${false}${null}${undefined}${true}${raw('<hr>')}${0}`.value).toBe('<ul><li>a&lt;b</li><li>c</li></ul><hr>0');
  });
});

describe('safeNext', () => {
  test.each([
    [undefined, '/'],
    ['/products?x=1', '/products?x=1'],
    ['//evil.example/x', '/'],
    ['/\\evil.example', '/'],
    ['https://evil.example/', '/'],
    ['javascript:alert(1)', '/'],
    ['products', '/'],
    // A tab (sent as %09, decoded from the query) that browsers drop: //evil.example.
    ['/\t/evil.example', '/'],
    ['/\n/evil.example', '/'],
    ['/\r\n//evil.example', '/'],
    ['/%09/evil.example', '/%09/evil.example'],
    ['/\u0000x', '/'],
    ['/./..//evil.example', '/'],
    ['/products#top', '/products#top'],
    ['/settings/team?tab=1&x=%2F%2Fa', '/settings/team?tab=1&x=%2F%2Fa'],
  ])('%j → %s', (next, expected) => expect(safeNext(next)).toBe(expected));
});

describe('the daily chart', () => {
  const days = (values: number[]) => values.map((sales, i) => ({ day: `2026-11-${String(i + 1).padStart(2, '0')}`, sales, downloads: 0 }));
  const axisLabels = (svg: string) => [...svg.matchAll(/text-anchor="end">(\d+)</g)].map((m) => Number(m[1]));

  test('has one pair of bars per day and a title with the figures for each', () => {
    const svg = dailyChart(days([1, 0, 3])).value;
    expect(svg.match(/class="bar-sales"/g)).toHaveLength(3);
    expect(svg.match(/class="bar-downloads"/g)).toHaveLength(3);
    expect(svg).toContain('<title>2026-11-03: 3 sales, 0 downloads</title>');
    expect(svg).toContain('<title>2026-11-01: 1 sale, 0 downloads</title>');
  });

  test.each([
    [[0], [0, 1, 2]],
    [[1], [0, 1, 2]],
    [[3], [0, 2, 4]],
    [[7], [0, 5, 10]],
    [[37], [0, 20, 40]],
    [[101], [0, 100, 200]],
  ])('a peak of %j gets whole-number axis lines %j', (values, labels) => {
    expect(axisLabels(dailyChart(days(values)).value)).toEqual(labels);
  });

  test('is an image with a text alternative and a table of the same figures', () => {
    const svg = dailyChart(days([2, 5])).value;
    expect(svg).toMatch(/<svg [^>]*role="img" aria-labelledby="chart-title"/);
    expect(svg).toContain('<th scope="row">2026-11-02</th><td>5</td><td>0</td>');
  });
});

describe('products are live when published with a ready active version', () => {
  const listing = (status: 'draft' | 'published' | 'archived', withVersion: boolean): ProductListing => ({
    product: {
      id: 'p', orgId: 'o', name: 'P', slug: 'p', description: '', status, activeVersionId: withVersion ? 'v' : null,
      skus: [], downloadLimit: null, licenseKeys: null, stampPdfs: false, createdAt: '', updatedAt: '',
    },
    activeVersion: withVersion ? { id: 'v', productId: 'p', version: '1', status: 'ready' } : null,
  });

  test.each([
    ['published', true, true, null],
    ['published', false, false, 'upload a version and make it active'],
    ['draft', true, false, 'publish it'],
    ['draft', false, false, 'upload a version and make it active, then publish it'],
    ['archived', true, false, 'publish it'],
  ] as const)('%s, with version %s', (status, withVersion, live, step) => {
    expect(isLive(listing(status, withVersion))).toBe(live);
    const why = whyNotLive(listing(status, withVersion));
    if (step === null) expect(why).toBeNull();
    else expect(why).toContain(`Not live yet: ${step}.`);
  });
});

describe('team roles', () => {
  test('owners grant any role, admins admin or member, members none', () => {
    expect(grantableRoles('owner')).toEqual(['owner', 'admin', 'member']);
    expect(grantableRoles('admin')).toEqual(['admin', 'member']);
    expect(grantableRoles('member')).toEqual([]);
  });

  test('nobody changes their own role; admins never touch an owner', () => {
    expect(mayChangeRoleOf({ userId: 'a', role: 'owner' }, { id: 'a', role: 'owner' })).toBe(false);
    expect(mayChangeRoleOf({ userId: 'a', role: 'owner' }, { id: 'b', role: 'owner' })).toBe(true);
    expect(mayChangeRoleOf({ userId: 'a', role: 'admin' }, { id: 'b', role: 'owner' })).toBe(false);
    expect(mayChangeRoleOf({ userId: 'a', role: 'admin' }, { id: 'b', role: 'member' })).toBe(true);
    expect(mayChangeRoleOf({ userId: 'a', role: 'member' }, { id: 'b', role: 'member' })).toBe(false);
  });
});

const HOSTILE = '<img src=x onerror="alert(1)">';
const ESCAPED = '&lt;img src=x onerror=&quot;alert(1)&quot;&gt;';

const contextOf = (role: Role): PageContext => ({
  user: { id: 'u', email: 'staff@example.com', name: 'Staff', role, orgId: 'o', orgName: 'Acme', subscriptionExpiresOn: null, catalogueVersion: '0' },
  csrfToken: 'csrf', isAdmin: role !== 'member', hasDevMailbox: false,
});

const PURCHASE_ID = '0b6c3e3c-8d5c-4f3e-9d1a-2b7e4c1f0a11';

function purchaseRow(overrides: Partial<PurchaseRow> = {}): PurchaseRow {
  return {
    id: PURCHASE_ID, createdAt: '2026-11-26T10:00:00.000Z', productId: 'p1', productName: 'Ebook Pro', versionId: 'v1',
    customerId: 'c1', customerName: 'Sam', customerEmail: 'sam@example.com', amount: '19.99', currency: 'USD',
    paymentMethod: 'card', source: 'api', externalOrderId: null, test: false, receiptStatus: 'sent',
    receiptSentAt: '2026-11-26T10:00:05.000Z', revokedAt: null, revokeReason: null, downloadLimit: null, licenseKey: null, ...overrides,
  };
}

function evidence(overrides: Partial<EvidenceRecord> = {}): EvidenceRecord {
  return {
    generatedAt: '2026-11-27T10:00:00.000Z',
    seller: { organisation: 'Acme', supportEmail: null },
    purchase: { id: PURCHASE_ID, product: 'Ebook Pro', version: '1.0.0', createdAt: '2026-11-26T10:00:00.000Z', test: false, revokedAt: null, revokeReason: null },
    customer: { name: 'Sam', email: 'sam@example.com' },
    order: { source: 'api', externalOrderId: null, amount: '19.99', currency: 'USD', paymentMethod: 'card', receivedAt: '2026-11-26T10:00:00.000Z', deliveries: [] },
    receipts: [],
    reminder: null,
    links: [],
    linksNotListed: 0,
    accesses: [],
    accessesNotListed: 0,
    staffActions: [],
    license: null,
    ...overrides,
  };
}

function detail(purchase: Partial<PurchaseRow> = {}, record: Partial<EvidenceRecord> = {}, reminder: PurchaseReminder = { state: 'none' }): PurchaseDetail {
  return {
    purchase: purchaseRow(purchase),
    allowance: { product: null, override: null, effective: null, used: 0, countedFrom: null },
    reminder,
    evidence: evidence(record),
    license: { kind: 'none' },
  };
}

describe('the purchase page', () => {
  test('escapes what buyers and platforms wrote: names, order ids, user agents, file names, staff details', () => {
    const markup = purchaseDetailPage(contextOf('admin'), detail(
      { customerName: HOSTILE, productName: HOSTILE, externalOrderId: HOSTILE },
      {
        accesses: [{ at: '2026-11-26T11:00:00.000Z', kind: 'file transfer', ip: '203.0.113.9', userAgent: HOSTILE, file: HOSTILE, bytes: 2048, count: 1 }],
        staffActions: [{ at: '2026-11-26T12:00:00.000Z', action: 'revoke', by: HOSTILE, detail: HOSTILE }],
      },
    ));
    expect(markup).not.toContain(HOSTILE);
    expect(markup.split(ESCAPED).length - 1).toBeGreaterThanOrEqual(7);
    expect(markup).toContain('<td class="num"><span title="2048 bytes">2.0 KiB</span></td>');
  });

  test('says so when nothing happened yet', () => {
    const markup = purchaseDetailPage(contextOf('owner'), detail());
    expect(markup).toContain('No link issued yet.');
    expect(markup).toContain('The buyer has not opened a link yet.');
    expect(markup).toContain('No staff action yet.');
    expect(markup).toContain('unlimited');
    expect(markup).not.toContain('data-testid="access-withdrawn"');
  });

  test('owners and admins get the actions and the evidence links; members the same page without them', () => {
    const admin = purchaseDetailPage(contextOf('admin'), detail());
    expect(admin).toContain(`action="/api/purchases/${PURCHASE_ID}/revoke"`);
    expect(admin).toContain(`action="/api/purchases/${PURCHASE_ID}/rearm"`);
    expect(admin).toMatch(new RegExp(`data-method="PUT" action="/api/purchases/${PURCHASE_ID}/download-limit"`));
    expect(admin).toContain(`href="/api/purchases/${PURCHASE_ID}/evidence?format=json"`);
    expect(admin).toContain(`href="/api/purchases/${PURCHASE_ID}/evidence?format=pdf"`);
    expect(admin).toMatch(/data-json action="[^"]+\/revoke"[^>]*data-confirm=/);
    expect(admin).toMatch(/data-json action="[^"]+\/rearm"[^>]*data-confirm=/);

    const member = purchaseDetailPage(contextOf('member'), detail());
    expect(member).not.toContain('data-json');
    expect(member).not.toContain('/evidence');
    expect(member).toContain('Links issued');
  });

  test('a revoked purchase says why and since when, offers restore instead of revoke, and no re-arm', () => {
    const markup = purchaseDetailPage(contextOf('admin'), detail({ revokedAt: '2026-11-26T12:34:00.000Z', revokeReason: 'chargeback' }));
    expect(markup).toMatch(/Access withdrawn \(chargeback\) on <time datetime="2026-11-26T12:34:00.000Z">26 Nov 2026, 12:34 UTC<\/time>/);
    expect(markup).toContain('/restore"');
    expect(markup).not.toContain('/revoke"');
    expect(markup).not.toContain('/rearm"');
  });

  test('the download limit: whose it is, what is used since when, and when it is reached', () => {
    const d = detail();
    d.allowance = { product: 5, override: 2, effective: 2, used: 2, countedFrom: '2026-11-26T13:00:00.000Z' };
    const markup = purchaseDetailPage(contextOf('admin'), d);
    expect(markup).toContain('2 completed file transfers per purchase');
    expect(markup).toContain("this purchase's own limit; the product's is 5");
    expect(markup).toContain('since the last re-arm');
    expect(markup).toContain('limit reached');
    expect(markup).toMatch(/name="downloadLimit"[^>]*value="2"/);
  });

  test('the license key: its status, seats and installations, each with Deactivate for owners and admins; or that it waits for one', () => {
    const d = detail();
    d.license = {
      kind: 'issued',
      license: {
        key: 'K7M2Q-9XW4T-R3HBN-6PZ8C', status: 'active', activationLimit: 3,
        activations: [
          { instanceId: 'i-1', instanceName: HOSTILE, activatedAt: '2026-11-26T10:00:00.000Z', deactivatedAt: null },
          { instanceId: 'i-2', instanceName: 'Old PC', activatedAt: '2026-11-26T09:00:00.000Z', deactivatedAt: '2026-11-26T09:30:00.000Z' },
        ],
      },
    };
    const admin = purchaseDetailPage(contextOf('admin'), d);
    expect(admin).toContain('K7M2Q-9XW4T-R3HBN-6PZ8C');
    expect(admin).toContain('<dd data-testid="license-seats">1 of 3</dd>');
    expect(admin).not.toContain(HOSTILE);
    expect(admin).not.toContain('Old PC');
    expect(admin).toMatch(new RegExp(`data-method="DELETE" action="/api/purchases/${PURCHASE_ID}/license/activations/i-1"`));
    const member = purchaseDetailPage(contextOf('member'), d);
    expect(member).toContain('K7M2Q-9XW4T-R3HBN-6PZ8C');
    expect(member).not.toContain('/license/activations/');

    expect(purchaseDetailPage(contextOf('admin'), { ...d, license: { kind: 'waiting' } })).toContain('Waiting for a license key');
    expect(purchaseDetailPage(contextOf('admin'), detail())).not.toContain('License key');
  });

  test('the reminder: when it went, when it is due, that the mail server refused it, or nothing', () => {
    const sent = purchaseDetailPage(contextOf('member'), detail({}, {}, { state: 'sent', at: '2026-11-27T10:00:05.000Z' }));
    expect(sent).toMatch(/data-testid="reminder">Reminder sent <time[^>]*2026-11-27T10:00:05.000Z/);
    const due = purchaseDetailPage(contextOf('member'), detail({}, {}, { state: 'due', at: '2026-11-27T10:00:05.000Z' }));
    expect(due).toMatch(/data-testid="reminder">Reminder due <time[^>]*2026-11-27T10:00:05.000Z/);
    expect(purchaseDetailPage(contextOf('member'), detail({}, {}, { state: 'refused' }))).toContain('refused by the mail server');
    expect(purchaseDetailPage(contextOf('member'), detail())).not.toContain('data-testid="reminder"');
  });

  test('shows the accesses newest first, with repeated page opens counted, and says how many older ones the record leaves out', () => {
    const accesses = Array.from({ length: 5 }, (_, i) => ({
      at: new Date(Date.UTC(2026, 10, 26, 0, i)).toISOString(), kind: 'page open' as const, ip: `10.0.0.${i}`, userAgent: null, file: null, bytes: null, count: i + 1,
    }));
    const markup = purchaseDetailPage(contextOf('member'), detail({}, { accesses, accessesNotListed: 300 }));
    expect(markup).toContain('The newest 5 of 305');
    expect(markup).toContain('page open (5 times)');
    expect(markup.indexOf(accesses[4].at)).toBeLessThan(markup.indexOf(accesses[3].at));
  });
});

describe('the purchase list', () => {
  test('links each row to its page and marks revoked ones, without the resend button', () => {
    const markup = purchaseList(contextOf('member'), [purchaseRow(), purchaseRow({ id: 'r1', revokedAt: '2026-11-26T12:00:00.000Z', revokeReason: 'refund' })], '', 200).value;
    expect(markup).toContain(`href="/purchases/${PURCHASE_ID}"`);
    expect(markup).toContain('href="/purchases/r1"');
    expect(markup.match(/badge-revoked/g)).toHaveLength(1);
    expect(markup.match(/Resend link/g)).toHaveLength(1);
  });
});

describe('badges', () => {
  test('a word with spaces becomes one hyphenated class', () => {
    expect(badge('not found').value).toBe('<span class="badge badge-not-found">not found</span>');
    expect(badge('already revoked').value).toBe('<span class="badge badge-already-revoked">already revoked</span>');
    expect(badge('Pending').value).toBe('<span class="badge badge-pending">Pending</span>');
  });
});

describe('the webhook log', () => {
  const entry = (kind: LogEntry['kind'], outcomes: Array<LogEntry['items'][number]['outcome']>): LogEntry => ({
    id: `d-${kind}`, platform: 'storefront-a', externalOrderId: '1001', source: 'webhook' as const, status: 'Success', unmatched: false, test: false,
    items: outcomes.map((outcome) => ({ sku: 'ebook', productId: null, outcome, reason: outcome === 'kept' ? 'partial refund, access kept' : null, purchaseId: PURCHASE_ID })),
    receivedAt: '2026-11-26T10:00:00.000Z', completedAt: null, workflowIds: [], kind,
  });
  const render = (entries: LogEntry[]) => webhookLogPage(contextOf('member'), {
    entries, more: false, products: new Map(), customers: [], recorded: new Map(), workflowUrl: () => null, backlog: { waiting: 0, oldestAgeSeconds: 0, deadLetters: 0 },
  });

  test('marks refund and dispute entries, not orders, and badges the revocation outcomes', () => {
    const markup = render([
      entry('order', ['fulfilled']),
      entry('refund', ['revoked', 'not found', 'already revoked', 'kept']),
      entry('dispute', ['revoked']),
    ]);
    expect(markup).toContain('<span class="badge badge-refund">Refund</span>');
    expect(markup).toContain('<span class="badge badge-dispute">Dispute</span>');
    expect(markup.match(/badge-refund|badge-dispute/g)).toHaveLength(2);
    for (const cls of ['badge-revoked', 'badge-not-found', 'badge-already-revoked', 'badge-kept']) expect(markup).toContain(cls);
    expect(markup).toContain('partial refund, access kept');
    expect(markup).toContain(`href="/purchases/${PURCHASE_ID}"`);
    expect(markup).toContain('data-kind="refund"');
  });
});

/** An SKU a platform sent with markup, quotes, an ampersand, a slash, a percent sign and a question mark. */
const NASTY_SKU = `<b>DK</b> & "x"/'y' 100%?`;
const NASTY_ESCAPED = '&lt;b&gt;DK&lt;/b&gt; &amp; &quot;x&quot;/&#39;y&#39; 100%?';
const NASTY_ENCODED = encodeURIComponent(NASTY_SKU).replace(/'/g, '&#39;');

function listing(id: string, name: string, live = true): ProductListing {
  return {
    product: {
      id, orgId: 'o', name, slug: name.toLowerCase().replace(/\W+/g, '-'), description: '', status: live ? 'published' : 'draft',
      activeVersionId: 'v2', skus: [], downloadLimit: null, licenseKeys: null, stampPdfs: false, createdAt: '', updatedAt: '',
    },
    activeVersion: { id: 'v2', productId: id, version: '2.0.0', status: 'ready' },
  };
}

describe('the unmatched-SKU panel', () => {
  const unmatched = {
    total: 3,
    skus: [
      { platform: 'storefront-a' as const, sku: NASTY_SKU, count: 2, lastSeenAt: '2026-11-26T10:00:00.000Z' },
      { platform: 'cart-e' as const, sku: '', count: 1, lastSeenAt: '2026-11-26T09:00:00.000Z' },
    ],
  };

  test('escapes the SKU, links its page with the SKU URL-encoded, and offers no link for a line without one', () => {
    const markup = unmatchedPanel(contextOf('admin'), unmatched).value;
    expect(markup).not.toContain('<b>DK</b>');
    expect(markup).toContain(`<code>${NASTY_ESCAPED}</code>`);
    expect(markup).toContain(`href="/unmatched?sku=${NASTY_ENCODED}"`);
    expect(unmatchedHref(NASTY_SKU)).toBe(`/unmatched?sku=${encodeURIComponent(NASTY_SKU)}`);
    expect(markup.match(/Map and deliver/g)).toHaveLength(1);
    expect(markup).toContain('<code>(none)</code>');
    expect(markup).toContain('record by hand');
    expect(markup).toContain('<span data-testid="unmatched-total">3</span>');
  });

  test('members get a link to the held sales instead; nothing held says so', () => {
    const member = unmatchedPanel(contextOf('member'), unmatched).value;
    expect(member).not.toContain('Map and deliver');
    expect(member).toContain('Held sales<span class="visually-hidden"> of SKU');
    const empty = unmatchedPanel(contextOf('admin'), { total: 0, skus: [] }).value;
    expect(empty).toContain('Every SKU your platforms sent maps to a product.');
    expect(empty).not.toContain('<table');
  });
});

describe('the page of an unmatched SKU', () => {
  const sale = (overrides: Partial<HeldSale> = {}): HeldSale => ({
    itemId: 'i1', deliveryId: 'd1', platform: 'storefront-a', externalOrderId: '5901', sku: NASTY_SKU,
    receivedAt: '2026-11-26T10:00:00.000Z', customerEmail: 'ada@example.com', amount: '29.00', currency: 'USD', deliverable: true, ...overrides,
  });
  const held = (overrides: Partial<HeldSales> = {}): HeldSales => ({
    sku: NASTY_SKU, productId: null,
    sales: [sale(), sale({ itemId: 'i2', platform: 'cart-e', externalOrderId: HOSTILE, customerEmail: HOSTILE, sku: NASTY_SKU.toUpperCase() }),
      sale({ itemId: 'i3', deliverable: false, customerEmail: null, amount: null, currency: null })],
    ...overrides,
  });
  const products = [listing('p1', 'Design Kit'), listing('p2', 'Draft <Thing>', false)];

  test('escapes the SKU and what the platform sent, and URL-encodes the SKU in the API actions', () => {
    const markup = unmatchedPage(contextOf('admin'), { held: held(), products });
    expect(markup).not.toContain('<b>DK</b>');
    expect(markup).not.toContain(HOSTILE);
    expect(markup).toContain(`<code data-testid="sku">${NASTY_ESCAPED}</code>`);
    expect(markup).toContain(`action="/api/unmatched-skus/${NASTY_ENCODED}/map"`);
    expect(markup).toContain('Draft &lt;Thing&gt; (draft-thing-), not live');
    expect(markup.split(ESCAPED).length - 1).toBe(2);
    expect(markup).toContain('sent as <code>&lt;B&gt;DK&lt;/B&gt;');
  });

  test('unmapped: the map form offers the products (productId, required) and there is nothing to deliver yet', () => {
    const markup = unmatchedPage(contextOf('owner'), { held: held(), products });
    expect(markup).toMatch(/<select id="map-product" name="productId" required>\s*<option value="">Choose a product…<\/option>\s*<option value="p1">Design Kit \(design-kit\)<\/option>/);
    expect(markup).not.toContain('/deliver"');
    expect(markup).toContain('<span data-testid="held-count">3</span>');
    expect(markup.match(/badge-success">deliverable/g)).toHaveLength(2);
    expect(markup.match(/record by hand/g)).toHaveLength(1);
    expect(markup).toContain('1 sale was recorded before sales were kept');
  });

  test('mapped to a live product: "Deliver these" with the deliverable count and the answer in its message', () => {
    const markup = unmatchedPage(contextOf('admin'), { held: held({ productId: 'p1' }), products });
    expect(markup).toContain('Maps to <a href="/products/p1">Design Kit</a>');
    expect(markup).not.toContain('name="productId"');
    expect(markup).toContain(`action="/api/unmatched-skus/${NASTY_ENCODED}/deliver"`);
    expect(markup).toContain('data-done="{delivering} {delivering:sale is|sales are} being delivered. Reloading…"');
    expect(markup).toContain('Deliver these (2)');
    expect(markup).toContain('receipt');
  });

  test('mapped to a product that is not live: no deliver button, and why', () => {
    const markup = unmatchedPage(contextOf('admin'), { held: held({ productId: 'p2' }), products });
    expect(markup).not.toContain('/deliver"');
    expect(markup).toContain('The product is not live');
  });

  test('members see the held sales without forms; nothing held says so', () => {
    const member = unmatchedPage(contextOf('member'), { held: held({ productId: 'p1' }), products });
    expect(member).not.toContain('data-json');
    expect(member).not.toContain('<select');
    const unmapped = unmatchedPage(contextOf('member'), { held: held(), products });
    expect(unmapped).toContain('An owner or admin can map it to one.');
    expect(unmapped).not.toContain('data-json');
    const empty = unmatchedPage(contextOf('admin'), { held: held({ productId: 'p1', sales: [] }), products });
    expect(empty).toContain('No sale is held back by this SKU now.');
    expect(empty).toContain('<span data-testid="held-count">0</span>');
    expect(empty).not.toContain('/deliver"');
  });
});

describe('the version notices of a product', () => {
  const progress = (overrides: Partial<NotificationProgress> = {}): NotificationProgress => ({
    notificationId: 'n1', productId: 'p1', versionId: 'v1', version: '1.0.0', status: 'done', total: 3, sent: 2, failed: 1, left: 0,
    startedAt: '2026-11-20T10:00:00.000Z', completedAt: '2026-11-20T10:00:05.000Z', workflowId: 'notify/v1', ...overrides,
  });
  const render = (role: Role, v: Omit<VersionNotices, 'activeIsNewer'> & { activeIsNewer?: boolean }, l = listing('p1', 'Ebook <Pro>')) =>
    versionNoticesSection(contextOf(role), l, { activeIsNewer: true, ...v }).value;

  test('the active version not announced yet: admins get the button with the count and a confirmation; members only the count', () => {
    const admin = render('admin', { wouldEmail: 2500, notifications: [progress()] });
    expect(admin).toContain('action="/api/products/p1/versions/v2/notify"');
    expect(admin).toContain('Notify 2,500 buyers of version 2.0.0</button>');
    expect(admin).toMatch(/data-confirm="Email 2,500 buyers that version 2\.0\.0 of Ebook &lt;Pro&gt; is out/);
    expect(admin).not.toContain('hx-trigger');
    const member = render('member', { wouldEmail: 1, notifications: [] });
    expect(member).not.toContain('data-json');
    expect(member).toContain('would email 1 buyer. An owner or admin can send it.');
    expect(member).toContain('No buyer was notified of a version yet.');
  });

  test('a running notice: no button, its progress, and the section polls itself every 2 s', () => {
    const markup = render('owner', {
      wouldEmail: 10, notifications: [progress({ versionId: 'v2', version: '2.0.0', status: 'running', total: 10, sent: 3, failed: 1, left: 6, completedAt: null }), progress()],
    });
    expect(markup).not.toContain('/notify"');
    expect(markup).toContain('Buyers were notified of this version (2.0.0): 4 of 10 so far.');
    expect(markup).toMatch(/<section class="panel" id="version-notices"[^>]* hx-get="\/products\/p1\/notices" hx-trigger="every 2s" hx-swap="outerHTML">/);
    expect(markup).toContain('<progress max="10" value="4"');
    expect(markup).toContain('<td class="num" data-testid="notice-left">6</td>');
    expect(markup.match(/data-status="running"/g)).toHaveLength(1);
    expect(markup.match(/data-status="done"/g)).toHaveLength(1);
  });

  test('a product\'s first version is nothing new: no button until a newer one is active', () => {
    const first = render('admin', { wouldEmail: 4, activeIsNewer: false, notifications: [] });
    expect(first).not.toContain('data-json');
    expect(first).toContain('Version 2.0.0 is the first: once a newer version is active');
  });

  test('once done it stops polling; nobody to email and no ready active version say so', () => {
    const done = render('admin', { wouldEmail: 5, notifications: [progress({ versionId: 'v2', version: '2.0.0', total: 0, sent: 0, failed: 0 })] });
    expect(done).not.toContain('hx-trigger');
    expect(done).toContain('<progress max="1" value="1"');
    expect(done).toContain('Buyers were notified of this version (2.0.0): 0 emailed.');
    expect(render('admin', { wouldEmail: 0, notifications: [] })).toContain('No buyer to notify of version 2.0.0');
    const noVersion = listing('p1', 'Ebook');
    noVersion.activeVersion = null;
    const none = render('admin', { wouldEmail: 3, notifications: [] }, noVersion);
    expect(none).toContain('Make a ready version active to notify buyers of it.');
    expect(none).not.toContain('data-json');
  });
});

describe('a product\'s license keys', () => {
  test('the policy in words', () => {
    expect(licenseKeysText(null)).toBe('none');
    expect(licenseKeysText({ source: 'generated', activationLimit: null })).toBe('generated with each purchase, unlimited activations');
    expect(licenseKeysText({ source: 'pool', activationLimit: 1 })).toBe('from the uploaded pool, 1 activation per key');
  });

  test('the pool\'s counts refresh themselves on "refresh"; below 10 available a warning says what it means', () => {
    const counts = (available: number) => licensePoolCounts('p1', { available, issued: 1200 }).value;
    expect(counts(10)).toMatch(/<div id="pool-counts" hx-get="\/products\/p1\/license-keys" hx-trigger="refresh" hx-swap="outerHTML">/);
    expect(counts(10)).toContain('<strong data-testid="pool-issued">1,200</strong> issued');
    expect(counts(10)).not.toContain('pool-low');
    expect(counts(9)).toContain('Only 9 keys left (fewer than 10)');
    expect(counts(1)).toContain('Only 1 key left');
    expect(counts(0)).toContain('The pool is empty: new sales are recorded, and their receipts wait');
  });
});
