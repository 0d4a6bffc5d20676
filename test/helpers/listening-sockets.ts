import { readFileSync } from 'node:fs';

/** TCP state LISTEN in /proc/net/tcp. */
const LISTEN = '0A';

/**
 * The listening sockets of `port` (IPv4 and IPv6), each as the number of connections waiting in its
 * accept queue (its rx_queue in /proc/net/tcp): handshakes done, not yet accepted by the server.
 */
export function listeningSockets(port: number): number[] {
  const portHex = port.toString(16).toUpperCase().padStart(4, '0');
  const queues: number[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const [, local, , state, queue] = line.trim().split(/\s+/);
      if (state === LISTEN && local?.endsWith(`:${portHex}`)) queues.push(parseInt(queue.split(':')[1], 16));
    }
  }
  return queues;
}
