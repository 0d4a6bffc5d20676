/**
 * The kernel's accept queue of a listening TCP port: connections whose handshake is done (the client
 * counts them open and sends its request) but that the server has not accepted yet. Node accepts one
 * connection per listening socket and event-loop turn (libuv since 1.45), so a client opening
 * connections faster than the loop turns builds a queue that every new connection, from any sender,
 * waits in before the server sees a byte of it.
 */
import { listeningSockets } from '../../test/helpers/listening-sockets';
import { sampleUntilStopped } from './sampler';

/** Connections waiting in `port`'s accept queue now (all its listening sockets, IPv4 and IPv6). */
export function acceptQueueLength(port: number): number {
  return listeningSockets(port).reduce((sum, queued) => sum + queued, 0);
}

/** Samples `port`'s accept queue every 250 ms until the returned function is called; it gives the longest queue seen. */
export function sampleAcceptQueue(port: number): () => Promise<number> {
  let longest = 0;
  const stop = sampleUntilStopped(() => {
    longest = Math.max(longest, acceptQueueLength(port));
  });
  return async () => {
    await stop();
    return longest;
  };
}
