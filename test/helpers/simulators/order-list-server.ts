/**
 * What every order-list simulator shares: a real HTTP server on 127.0.0.1, a log of the requests
 * it answered, a 429 with `Retry-After` on a chosen page once, a chosen page failing with 500 a
 * number of times (the platform's outage), and revoking the credentials. Each
 * platform's simulator (beside this file) models its own API on top.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One answered request: when, which page (0-based; -1 when not a page: refused before paging, or a lookup by id), and the status. */
export interface AnsweredRequest {
  at: number;
  page: number;
  status: number;
}

export interface OrderListServer {
  /** `http://127.0.0.1:port`: the `apiBaseUrl` to give. */
  origin: string;
  requests: AnsweredRequest[];
  /** Answers 429 with `Retry-After: seconds` the next time page `page` is asked for. */
  throttleOnce(page: number, seconds: number): void;
  /** Answers 500 instead of page `page` the next `times` times it is asked for. */
  failPage(page: number, times: number): void;
  /** Every request is refused from now on (the credentials were revoked). */
  revokeToken(): void;
  close(): Promise<void>;
}

export interface SimulatedRequest {
  url: URL;
  headers: http.IncomingHttpHeaders;
  /** True once `revokeToken` was called. */
  revoked: boolean;
  /** Writes a JSON answer (a string is sent as is) and logs it. */
  answer(status: number, body: unknown, headers?: Record<string, string>, page?: number): void;
  /** The pending throttle of `page`, taken: its seconds, or undefined. */
  takeThrottle(page: number): number | undefined;
}

/** `headers()` go with every answer (a platform's rate-limit header). */
export async function startOrderListServer(
  handle: (request: SimulatedRequest, origin: string) => void,
  headers: () => Record<string, string> = () => ({}),
): Promise<OrderListServer> {
  const requests: AnsweredRequest[] = [];
  const throttles = new Map<number, number>();
  const failures = new Map<number, number>();
  let revoked = false;

  const server = http.createServer((req, res) => {
    if (req.method !== 'GET') {
      res.writeHead(405).end();
      return;
    }
    handle({
      url: new URL(req.url ?? '/', 'http://simulator'),
      headers: req.headers,
      revoked,
      answer: (status, body, extra = {}, page = -1) => {
        const failing = failures.get(page) ?? 0;
        if (status === 200 && failing > 0) {
          failures.set(page, failing - 1);
          [status, body, extra] = [500, { error: 'simulated outage' }, {}];
        }
        requests.push({ at: Date.now(), page, status });
        res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers(), ...extra });
        res.end(typeof body === 'string' ? body : JSON.stringify(body));
      },
      takeThrottle: (page) => {
        const seconds = throttles.get(page);
        throttles.delete(page);
        return seconds;
      },
    }, origin);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    origin,
    requests,
    throttleOnce: (page, seconds) => throttles.set(page, seconds),
    failPage: (page, times) => failures.set(page, times),
    revokeToken: () => {
      revoked = true;
    },
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
