import { postSignin } from '../helpers/dashboard';
import { seedPurchase } from '../helpers/download-links';
import { startHarness, type Harness } from '../helpers/harness';
import { eventually, orderBody, seedWebhookOrg, send, type WebhookOrg } from '../helpers/webhooks';

let h: Harness;
let org: WebhookOrg;

beforeAll(async () => {
  h = await startHarness({ worker: false });
  org = await seedWebhookOrg(h);
});
afterAll(() => h?.close());

async function scrape(): Promise<string> {
  const res = await h.app.inject({ method: 'GET', url: '/metrics' });
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain/);
  return res.body;
}

/** The value of one series (name with its labels as Prometheus writes them), or undefined. */
function value(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

test('/metrics serves the process, per-route latency and the outbox backlog', async () => {
  await h.app.inject({ method: 'GET', url: '/healthz' });
  const text = await scrape();
  expect(text).toContain('process_cpu_user_seconds_total');
  expect(text).toContain('nodejs_eventloop_lag_seconds');
  expect(text).toMatch(/http_request_duration_seconds_count\{[^}]*route="\/healthz"[^}]*\} \d+/);
  expect(value(text, 'delivery_outbox_waiting_rows')).toBeGreaterThanOrEqual(0);
  expect(value(text, 'delivery_outbox_oldest_age_seconds')).toBeGreaterThanOrEqual(0);
});

test('webhook acknowledgements are counted by platform and status', async () => {
  const before = value(await scrape(), 'delivery_webhook_acks_total{platform="cart-e",status="200"}') ?? 0;
  expect((await send(h.app, 'cart-e', org.orgId, orderBody('cart-e', org.orgId, 'metrics-1'))).status).toBe(200);
  expect((await send(h.app, 'cart-e', org.orgId, orderBody('cart-e', org.orgId, 'metrics-2'), { unsigned: true })).status).toBe(401);
  const text = await scrape();
  expect(value(text, 'delivery_webhook_acks_total{platform="cart-e",status="200"}')).toBe(before + 1);
  expect(value(text, 'delivery_webhook_acks_total{platform="cart-e",status="401"}')).toBeGreaterThanOrEqual(1);
  // The recorded start waits in the outbox (this harness has no worker, the dispatcher may hold it).
  expect(value(text, 'delivery_outbox_waiting_rows')).toBeGreaterThanOrEqual(0);
});

test('failed sign-ins are counted', async () => {
  const before = value(await scrape(), 'delivery_signin_failures_total') ?? 0;
  expect((await postSignin(h.app, 'nobody@example.com', 'not the password at all')).statusCode).toBe(401);
  expect(value(await scrape(), 'delivery_signin_failures_total')).toBe(before + 1);
});

test('downloads started, completed and their bytes are counted', async () => {
  const { token } = await seedPurchase(h, org.orgId, org.ebook);
  const url = `/d/${token}/files/${org.ebook.fileId}`;
  const res = await h.app.inject({ method: 'GET', url });
  expect(res.statusCode).toBe(200);
  const size = res.rawPayload.length;
  // The transfer is recorded once the response has finished.
  const text = await eventually(async () => {
    const scraped = await scrape();
    return value(scraped, 'delivery_downloads_completed_total') === 1 ? scraped : undefined;
  });
  expect(value(text, 'delivery_downloads_started_total')).toBe(1);
  expect(value(text, 'delivery_downloads_completed_total')).toBe(1);
  expect(value(text, 'delivery_download_bytes_total')).toBe(size);
});
