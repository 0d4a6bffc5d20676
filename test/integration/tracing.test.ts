/**
 * OpenTelemetry traces (production shape, item 4): one trace from the webhook request through the
 * outbox dispatch, the workflow start and run, the receipt activity, to the SMTP send. Spans are
 * kept by an in-memory exporter; the worker, the dispatcher and the app are the real ones, on the
 * real Temporal server and mail server.
 */
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { installTracing, uninstallTracing } from '../../src/telemetry/tracing';
import { startHarness, type Harness } from '../helpers/harness';
import { eventually, orderBody, seedWebhookOrg, send, withEmail, withOrderId, type WebhookOrg } from '../helpers/webhooks';

const exporter = new InMemorySpanExporter();
let h: Harness;
let org: WebhookOrg;

beforeAll(async () => {
  installTracing({ serviceName: 'delivery-service-test' }, new SimpleSpanProcessor(exporter));
  h = await startHarness({ tracedWorkflows: true });
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

test('a webhook, its dispatch, the workflow, the receipt activity and the SMTP send share one trace, each span the child of the one before', async () => {
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
    'StartActivity:sendReceipt',
    'RunActivity:sendReceipt',
    'smtp send',
  ]);
  // The platform's own trace context is continued, not replaced.
  expect(new Set(chain.map((s) => s.spanContext().traceId))).toEqual(new Set(['4bf92f3577b34da6a3ce929d0e0e4736']));
  const request = chain[chain.length - 1];
  expect(request.parentSpanId).toBe('00f067aa0ba902b7');
  expect(request.attributes['http.route']).toBe('/webhooks/:orgId/cart-e');
});
