/**
 * The privacy findings of the security review (issue 23) that are not about spans (those are in
 * tracing.test.ts): one describe each, every test here failed on the code before its fix.
 */
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { buildApp } from '../../src/http/app';
import { startHarness, type Harness } from '../helpers/harness';
import { EMAIL_ADDRESS } from '../helpers/privacy';
import { seedWebhookOrg, type WebhookOrg } from '../helpers/webhooks';

let h: Harness;
let org: WebhookOrg;

beforeAll(async () => {
  h = await startHarness({ worker: false });
  org = await seedWebhookOrg(h);
});
afterAll(() => h?.close());

describe('L7. logs carry no tokens, query-string emails or SQL values', () => {
  test('requests with tokens, secrets and emails in their URLs, and a database error, are logged without them', async () => {
    const lines: string[] = [];
    const logStream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString('utf8'));
        done();
      },
    });
    const app = await buildApp({
      config: { ...h.config, logLevel: 'info' }, orm: h.orm, fulfilment: h.fulfilment, storage: h.storage, clock: () => new Date(), logStream,
    });
    await app.ready();
    const token = randomBytes(32).toString('base64url');
    const email = 'logged-review@example.com';
    try {
      for (const url of [
        `/unsubscribe/${token}`,
        `/d/${token}`,
        `/api/customers?email=${encodeURIComponent(email)}`,
        `/my?email=${email}`,
        `/webhooks/${org.orgId}/cart-e?secret=${token}`,
      ]) {
        await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${org.apiKey}` } });
      }
      // A real database error whose statement carries a value: PostgreSQL refuses the cast.
      const error = await h.orm.em.fork().execute('select ?::uuid', [email]).catch((e: unknown) => e as Error);
      app.log.error({ err: error }, 'request failed');
    } finally {
      await app.close();
    }
    const log = lines.join('');
    expect(log).toContain('/unsubscribe/[token]');
    expect(log).toContain('database error 22P02');
    expect(log).not.toContain(token);
    expect(log).not.toMatch(EMAIL_ADDRESS);
  });
});
