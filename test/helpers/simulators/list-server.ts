/**
 * What every order-list simulator shares: a real HTTP server on 127.0.0.1, a record of each answer
 * (when, which page, which status), a page that answers 429 with `Retry-After` once when a test asks,
 * and credentials a test can revoke. Each platform's simulator (beside this file) models its own
 * path, auth, filter, pagination and bodies.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface AnsweredRequest {
  at: number;
  /** The page asked for (0-based), or -1 when refused before paging. */
  page: number;
  status: number;
}

export interface ListRequest {
  req: http.IncomingMessage;
  url: URL;
  /** The simulator's own origin, for the links it writes. */
  origin: string;
  /** Whether a test revoked the credentials: every request is then refused. */
  revoked: boolean;
  answer(status: number, body: unknown, headers?: Record<string, string>, page?: number): void;
  /** Answers 429 with `Retry-After` and `body` when a test asked for it on `page` (once); true when it did. */
  throttled(page: number, body: unknown, headers?: Record<string, string>): boolean;
}

export interface ListServer {
  /** `http://127.0.0.1:port`: the `apiBaseUrl` to give. */
  origin: string;
  requests: AnsweredRequest[];
  /** Answers 429 with `Retry-After: seconds` the next time page `page` (0-based) is asked for. */
  throttleOnce(page: number, seconds: number): void;
  /** Every request is refused from now on (the credentials were revoked). */
  revokeCredentials(): void;
  close(): Promise<void>;
}

/**
 * Starts the server; `handle` answers each request through `answer` (a string body is sent as is,
 * anything else as JSON). `everyAnswer` adds headers to every answer (a rate-limit report, say).
 */
export async function startListServer(
  handle: (request: ListRequest) => void, everyAnswer: () => Record<string, string> = () => ({}),
): Promise<ListServer> {
  const requests: AnsweredRequest[] = [];
  const throttles = new Map<number, number>();
  let revoked = false;
  let origin = '';

  const server = http.createServer((req, res) => {
    const answer: ListRequest['answer'] = (status, body, headers = {}, page = -1) => {
      requests.push({ at: Date.now(), page, status });
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...everyAnswer(), ...headers });
      res.end(typeof body === 'string' ? body : JSON.stringify(body));
    };
    handle({
      req,
      url: new URL(req.url ?? '/', origin),
      origin,
      revoked,
      answer,
      throttled: (page, body, headers = {}) => {
        const seconds = throttles.get(page);
        if (seconds === undefined) return false;
        throttles.delete(page);
        answer(429, body, { 'retry-after': String(seconds), ...headers }, page);
        return true;
      },
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    origin,
    requests,
    throttleOnce: (page, seconds) => throttles.set(page, seconds),
    revokeCredentials: () => {
      revoked = true;
    },
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
