/**
 * OpenTelemetry traces (production shape, item 4): one trace from the webhook request through the
 * outbox dispatch, the workflow start and run, the activity that sends the receipt, to the SMTP send. Spans are
 * kept by an in-memory exporter; the worker, the dispatcher and the app are the real ones, on the
 * real Temporal server and mail server.
 */
import { randomBytes } from 'node:crypto';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { installTracing, uninstallTracing } from '../../src/telemetry/tracing';
import { startHarness, type Harness } from '../helpers/harness';
import { EMAIL_ADDRESS } from '../helpers/privacy';
import { eventually, orderBody, SECRETS, seedWebhookOrg, send, withEmail, withOrderId, type WebhookOrg } from '../helpers/webhooks';

const exporter = new InMemorySpanExporter();
let h: Harness;
let org: WebhookOrg;

beforeAll(async () => {
  await installTracing({ serviceName: 'delivery-service-test' }, new SimpleSpanProcessor(exporter));
  h = await startHarness({ tracedWorkflows: true, mailbox: { reject: { match: (a) => a === 'refused-traced@example.com', code: 550 } } });
  org = await seedWebhookOrg(h);
});
afterAll(async () => {
  await h?.close();
  await uninstallTracing();
});

/** The span and its ancestors, nearest first, as far as the exporter has them. */
function ancestry(span: ReadableSpan, spans: ReadableSpan[]): ReadableSpan[] {
  const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
  const chain = [span];
  for (let parent = byId.get(span.parentSpanId ?? ''); parent; parent = byId.get(parent.parentSpanId ?? '')) chain.push(parent);
  return chain;
}

test('a webhook, its dispatch, the workflow, its first-round activity (the receipt\'s first attempt) and the SMTP send share one trace, each span the child of the one before', async () => {
  const body = withOrderId('cart-e', withEmail('cart-e', orderBody('cart-e', org.orgId), 'traced@example.com'), 'traced-1');
  const incoming = { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' };
  const res = await send(h.app, 'cart-e', org.orgId, body, { headers: incoming });
  expect(res.status).toBe(200);
  await h.mailbox.waitFor((m) => m.to.includes('traced@example.com'), 30_000);

  // Spans are exported as they end: the workflow's when the run closes, after the receipt.
  const chain = await eventually(async () => {
    const spans = exporter.getFinishedSpans();
    const smtpSend = spans.find((s) => s.name === 'smtp send');
    const found = smtpSend && ancestry(smtpSend, spans);
    return found?.[found.length - 1].name === 'request' ? found : undefined;
  }, 20_000, `the whole chain; spans so far: ${exporter.getFinishedSpans().map((s) => s.name).join(', ')}`).catch((error: Error) => {
    throw new Error(`${error.message}\nnow: ${exporter.getFinishedSpans().map((s) => `${s.name} ${s.spanContext().spanId}<-${s.parentSpanId}`).join('\n')}`);
  });
  expect(chain.map((s) => s.name).reverse()).toEqual([
    'request',
    expect.stringMatching(/^handler - /),
    'dispatch fulfil-line',
    'StartWorkflow:fulfilOrderLine',
    'RunWorkflow:fulfilOrderLine',
    'StartActivity:fulfilFirstRound',
    'RunActivity:fulfilFirstRound',
    'smtp send',
  ]);
  // The platform's own trace context is continued, not replaced.
  expect(new Set(chain.map((s) => s.spanContext().traceId))).toEqual(new Set(['4bf92f3577b34da6a3ce929d0e0e4736']));
  const request = chain[chain.length - 1];
  expect(request.parentSpanId).toBe('00f067aa0ba902b7');
  expect(request.attributes['http.route']).toBe('/webhooks/:orgId/cart-e');
});

test('no span attribute, event or status carries a download or unsubscribe token, a secret or an email address', async () => {
  exporter.reset();
  const downloadToken = randomBytes(32).toString('base64url');
  const unsubscribeToken = randomBytes(32).toString('base64url');
  const api = { authorization: `Bearer ${org.apiKey}` };
  // Every kind of request whose URL or failure carries one: cart-e's ?secret=, a refused receipt,
  // the customer's token paths, an email in a query string.
  const refused = withOrderId('cart-e', withEmail('cart-e', orderBody('cart-e', org.orgId), 'refused-traced@example.com'), 'traced-refused');
  expect((await send(h.app, 'cart-e', org.orgId, refused)).status).toBe(200);
  for (const request of [
    { method: 'GET', url: `/d/${downloadToken}` },
    { method: 'GET', url: `/d/${downloadToken}/files/${org.ebook.productId}` },
    { method: 'POST', url: `/d/${downloadToken}/refresh` },
    { method: 'GET', url: `/unsubscribe/${unsubscribeToken}` },
    { method: 'POST', url: `/unsubscribe/${unsubscribeToken}` },
    { method: 'GET', url: '/api/customers?email=query-traced%40example.com', headers: api },
    { method: 'GET', url: '/my?email=query-traced@example.com' },
    { method: 'GET', url: `/nowhere/${downloadToken}?email=query-traced@example.com` },
  ] as const) {
    await h.app.inject(request);
  }
  // The refused receipt's SMTP span ends with the run's failed activity.
  await eventually(async () => exporter.getFinishedSpans().find((s) => s.name === 'smtp send' && s.status.code === 2), 30_000, 'the refused send\'s span');

  const spans = exporter.getFinishedSpans();
  expect(spans.filter((s) => s.name === 'request').length).toBeGreaterThanOrEqual(9);
  const secrets = [downloadToken, unsubscribeToken, SECRETS['cart-e'].secret!];
  const leaks = spans.flatMap((span) => {
    const texts = [
      span.name,
      span.status.message ?? '',
      ...Object.entries(span.attributes).map(([k, v]) => `${k}=${String(v)}`),
      ...span.events.flatMap((e) => [e.name, ...Object.entries(e.attributes ?? {}).map(([k, v]) => `${k}=${String(v)}`)]),
    ];
    return texts.filter((t) => EMAIL_ADDRESS.test(t) || secrets.some((s) => t.includes(s))).map((t) => `${span.name}: ${t}`);
  });
  expect(leaks).toEqual([]);
  // What is kept instead: the route template, and an exception by its type.
  expect(spans.find((s) => s.attributes['http.route'] === '/unsubscribe/:token')?.attributes['url.path']).toBe('/unsubscribe/:token');
  const failedSend = spans.find((s) => s.name === 'smtp send' && s.status.code === 2)!;
  expect(failedSend.events.map((e) => e.name)).toEqual(['exception']);
  expect(failedSend.events[0].attributes?.['exception.type']).toBeDefined();
});
