import { safeNext } from '../../../src/http/routes/dashboard/guard';
import { html, raw } from '../../../src/templating/html';
import { dailyChart } from '../../../src/http/views/overview';
import { isLive, whyNotLive } from '../../../src/http/views/products';
import { grantableRoles, mayChangeRoleOf } from '../../../src/services/team';
import type { ProductListing } from '../../../src/services/products';

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
      skus: [], downloadLimit: null, createdAt: '', updatedAt: '',
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
