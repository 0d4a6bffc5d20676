import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { Purchase, VersionFile } from '../../src/db/entities';
import { issueDownloadLink } from '../../src/services/download-links';
import type { Harness } from './harness';
import { eventually } from './webhooks';

export interface SeededPurchase {
  purchaseId: string;
  customerId: string;
  /** The raw token of a fresh link (only its hash is stored). */
  token: string;
}

/** A purchase of `versionId` by `email` (the customer is found or created), with one fresh link. */
export async function seedPurchase(
  h: Harness,
  orgId: string,
  product: { productId: string; versionId: string },
  options: { email?: string; name?: string; now?: Date } = {},
): Promise<SeededPurchase> {
  const em = h.orm.em.fork();
  const email = (options.email ?? `buyer-${Math.random().toString(36).slice(2)}@example.com`).toLowerCase();
  await em.execute(
    `insert into customer (id, organisation_id, email, name, created_at) values (gen_random_uuid(), ?, ?, ?, now())
     on conflict (organisation_id, email) do nothing`,
    [orgId, email, options.name ?? 'Sam Buyer'],
  );
  const [customer] = await em.execute<Array<{ id: string }>>('select id from customer where organisation_id = ? and email = ?', [orgId, email]);
  const purchase = em.create(Purchase, {
    organisation: orgId, product: product.productId, version: product.versionId, customer: customer.id,
    amount: '10.00', currency: 'USD', paymentMethod: 'custom', source: 'api',
  });
  await em.flush();
  const token = await issueToken(h, purchase.id, options.now);
  return { purchaseId: purchase.id, customerId: customer.id, token };
}

/** Another fresh link for a purchase, issued at `now`. */
export async function issueToken(h: Harness, purchaseId: string, now: Date = new Date()): Promise<string> {
  const { url } = await issueDownloadLink(h.orm.em.fork(), purchaseId, h.config.downloadLinks, now);
  return tokenOfLink(url);
}

/** The token of a link `{site_url}/d/{token}`. */
export function tokenOfLink(url: string): string {
  return decodeURIComponent(url.slice(url.lastIndexOf('/d/') + 3));
}

/** Adds a file to a version, stored like an upload. */
export async function addVersionFile(h: Harness, versionId: string, name: string, bytes: Buffer): Promise<string> {
  const em = h.orm.em.fork();
  const file = em.create(VersionFile, { version: versionId, name, size: 0, sha256: '', storageKey: '' });
  file.storageKey = `files/${file.id}`;
  const stored = await h.storage.put(file.storageKey, Readable.from([bytes]), 1e10);
  Object.assign(file, stored);
  await em.flush();
  return file.id;
}

export function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Listens on a free port of 127.0.0.1; returns the base URL. */
export async function listen(h: Harness): Promise<string> {
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
}

/**
 * Waits until at least `expectedRuns` freshLinks runs (/my, the fresh-link button) were started on
 * this harness's task queue, then until every one has completed; their ids. After it, whatever those
 * runs were going to send is in the mailbox, so a test can assert what is not there.
 */
export async function freshLinkRunsSettled(h: Harness, expectedRuns: number): Promise<string[]> {
  const query = `WorkflowType = 'freshLinks' AND TaskQueue = '${h.config.temporal.taskQueue}'`;
  const ids = await eventually(async () => {
    const found: string[] = [];
    for await (const run of h.temporal.workflow.list({ query })) found.push(run.workflowId);
    return found.length >= expectedRuns ? found : undefined;
  }, 20_000, `${expectedRuns} freshLinks runs`);
  await Promise.all(ids.map((id) => h.temporal.workflow.getHandle(id).result()));
  return ids;
}
