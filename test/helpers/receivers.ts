import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  /** webhook-id */
  id: string;
  type: string;
  /** When it arrived (ms since 1970). */
  at: number;
}

/** How a receiver answers its n-th request (1-based): a status and body (after `delayMs`), or 'hang' (never answers). */
export type Answer = (n: number, request: Received) => { status: number; body?: string; headers?: Record<string, string>; delayMs?: number } | 'hang';

/** A real HTTP server on 127.0.0.1 that keeps every request it gets. */
export interface Receiver {
  url: string;
  received: Received[];
  /** Requests by webhook-id, for de-duplication as an integrator would do it. */
  uniqueIds(): Set<string>;
  close(): Promise<void>;
}

export async function startReceiver(answer: Answer = () => ({ status: 200, body: 'ok' })): Promise<Receiver> {
  const received: Received[] = [];
  const hanging = new Set<import('node:http').ServerResponse>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let type = '';
      try {
        type = (JSON.parse(body) as { type?: string }).type ?? '';
      } catch {
        // kept as received
      }
      const request = { headers: req.headers, body, id: String(req.headers['webhook-id'] ?? ''), type, at: Date.now() };
      received.push(request);
      const reply = answer(received.length, request);
      if (reply === 'hang') {
        hanging.add(res);
        return;
      }
      setTimeout(() => {
        res.writeHead(reply.status, { 'content-type': 'text/plain', ...reply.headers });
        res.end(reply.body ?? '');
      }, reply.delayMs ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    uniqueIds: () => new Set(received.map((r) => r.id)),
    close: () => new Promise((resolve) => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
