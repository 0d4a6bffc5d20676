/**
 * The remote codec endpoint of the Temporal UI (`/codec/encode`, `/codec/decode`): turns the
 * encrypted payloads of workflow histories into readable ones for an operator, and back. Only for
 * a signed-in operator (a user of no organisation, `npm run cli -- operator add`): payloads hold
 * every organisation's customers. Cross-origin for the Temporal UI's origin only, with credentials
 * (the operator's session cookie; the UI and the API must be same-site for it to travel).
 */
import cors from '@fastify/cors';
import type { Payload } from '@temporalio/common';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { boundedText } from '../../domain/field-limits';
import { ForbiddenError, UnauthorizedError } from '../../domain/errors';
import { EncryptionCodec } from '../../temporal/encryption-codec';
import type { AppDeps } from '../app';

const WirePayload = z.object({
  metadata: z.record(boundedText(256), boundedText(4096)).optional(),
  data: boundedText(8 * 1024 * 1024).optional(),
});
const WireBody = z.object({ payloads: z.array(WirePayload).max(1000) });
type WirePayload = z.infer<typeof WirePayload>;

const fromWire = (p: WirePayload): Payload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
  data: p.data === undefined ? undefined : Buffer.from(p.data, 'base64'),
});
const toWire = (p: Payload): WirePayload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? new Uint8Array()).toString('base64')])),
  ...(p.data ? { data: Buffer.from(p.data).toString('base64') } : {}),
});

/** The origins a browser may call the codec from: the Temporal UI's, under both names of loopback. */
export function codecOrigins(uiUrl: string | undefined): string[] {
  if (!uiUrl) return [];
  const url = new URL(uiUrl);
  const origins = new Set([url.origin]);
  if (url.hostname === '127.0.0.1') origins.add(url.origin.replace('127.0.0.1', 'localhost'));
  if (url.hostname === 'localhost') origins.add(url.origin.replace('localhost', '127.0.0.1'));
  return [...origins];
}

export function codecRoutes(deps: AppDeps): FastifyPluginAsyncZod {
  // Shows what a history holds, plain payloads of old runs included.
  const codec = new EncryptionCodec(deps.keyRing, { acceptPlaintext: true });
  const origins = codecOrigins(deps.temporalUiUrl);
  return async (app) => {
    await app.register(cors, {
      origin: origins,
      credentials: true,
      methods: ['POST'],
      allowedHeaders: ['content-type', 'x-namespace', 'authorization'],
      maxAge: 600,
    });
    app.addHook('onRequest', async (request) => {
      if (request.method === 'OPTIONS') return;
      const session = await app.sessions.current(request);
      if (!session) throw new UnauthorizedError('sign in as an operator first');
      if (session.user.orgId !== null) throw new ForbiddenError('only operators (users of no organisation) may decode payloads');
    });
    for (const [path, run] of [['/codec/encode', (p: Payload[]) => codec.encode(p)], ['/codec/decode', (p: Payload[]) => codec.decode(p)]] as const) {
      app.post(path, {
        schema: {
          summary: `Temporal remote codec: ${path.endsWith('encode') ? 'encrypt' : 'decrypt'} payloads`,
          description: 'For the Temporal UI (--ui-codec-endpoint); a signed-in operator only.',
          tags: ['operators'],
          body: WireBody,
        },
      }, async (request) => ({ payloads: (await run(request.body.payloads.map(fromWire))).map(toWire) }));
    }
  };
}
