/**
 * The kernel's accept queue of a listening TCP port: connections whose handshake is done (the client
 * counts them open and sends its request) but that the server has not accepted yet. Node accepts one
 * connection per listening socket and event-loop turn (libuv since 1.45), so a client opening
 * connections faster than the loop turns builds a queue that every new connection, from any sender,
 * waits in before the server sees a byte of it.
 */
import { readFileSync } from 'node:fs';
import { sampleUntilStopped } from './sampler';

/** TCP state LISTEN in /proc/net/tcp. */
const LISTEN = '0A';

/** Connections waiting in `port`'s accept queue now (its listening sockets' rx_queue, IPv4 and IPv6). */
export function acceptQueueLength(port: number): number {
  const portHex = port.toString(16).toUpperCase().padStart(4, '0');
  let waiting = 0;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const [, local, , state, queues] = line.trim().split(/\s+/);
      if (state !== LISTEN || !local?.endsWith(`:${portHex}`)) continue;
      waiting += parseInt(queues.split(':')[1], 16);
    }
  }
  return waiting;
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
