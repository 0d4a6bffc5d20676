/**
 * The API's listening sockets. Node accepts one connection per listening socket and event-loop turn
 * (libuv since 1.45), so a flood of new connections (a platform retrying with a connection per
 * request) waits in the kernel's accept queue, every tenant's connections behind it, while the loop
 * turns fast. Several sockets on the port (SO_REUSEPORT) accept that many a turn; the kernel spreads
 * new connections over them, and each hands its connections to the one HTTP server.
 *
 * SO_REUSEPORT also lets a second process that asks for it bind the port silently and take a share
 * of the traffic (a second `npm start`, say). So the port is first tried with a plain bind, which
 * meets every socket on it, with or without the option: when that fails, the app listens without
 * SO_REUSEPORT and fails the start with the bind's own error (EADDRINUSE), as it always did.
 */
import net from 'node:net';
import type { FastifyInstance, FastifyListenOptions } from 'fastify';
import { isPortFree } from '../dev/ports';

/** Listening sockets of the API on its port: measured against one (README, tenant fairness). */
export const LISTENING_SOCKETS = 4;

export interface ListenOptions {
  port: number;
  host: string;
  /** Connections the kernel may hold for each socket before they are accepted. */
  backlog: number;
}

/** node:net's listen options with `reusePort` (Node ≥ 22.12; the installed type definitions predate it). */
type SharedListenOptions = net.ListenOptions & { reusePort?: boolean };

function listenOn(server: net.Server, options: SharedListenOptions): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/**
 * Listens on HOST:PORT with `LISTENING_SOCKETS` sockets; resolves with the address the app
 * prints and a function that stops the extra sockets' accepting (before the app's close).
 */
export async function listenShared(app: FastifyInstance, options: ListenOptions): Promise<{ url: string; closeExtra: () => void }> {
  const reusePort = options.port === 0 || (await isPortFree(options.port, options.host));
  // Fastify passes its options through to node:net's listen.
  const listenOptions: FastifyListenOptions & SharedListenOptions = { port: options.port, host: options.host, backlog: options.backlog, reusePort };
  const url = await app.listen(listenOptions);
  const { port } = app.server.address() as net.AddressInfo;
  const extra: net.Server[] = [];
  try {
    for (let i = 1; reusePort && i < LISTENING_SOCKETS; i += 1) {
      const server = net.createServer((socket) => app.server.emit('connection', socket));
      await listenOn(server, { port, host: options.host, backlog: options.backlog, reusePort: true });
      extra.push(server);
    }
  } catch (error) {
    for (const server of extra) server.close();
    await app.close();
    throw error;
  }
  // Stops their accepting at once; not waiting for their close: it waits for every connection they
  // accepted, which the app's own close ends (the HTTP server tracks them all).
  const closeExtra = () => {
    for (const server of extra) server.close();
  };
  return { url, closeExtra };
}
