import { randomInt } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import net from 'node:net';

/** True when nothing listens on host:port (we can bind it ourselves). */
export function isPortFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** Where free ports are looked for: from here to the start of the kernel's ephemeral range. */
const FREE_PORTS_FROM = 20_000;

/**
 * The lowest local port the kernel gives outgoing connections (Linux: net.ipv4.ip_local_port_range),
 * or undefined where that cannot be read. Read once per process: a cluster's start asks for many ports.
 */
let ephemeralPortsStart: Promise<number | undefined> | undefined;
function readEphemeralPortsStart(): Promise<number | undefined> {
  ephemeralPortsStart ??= readFile('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').then(
    (range) => {
      const start = Number.parseInt(range, 10);
      return Number.isInteger(start) ? start : undefined;
    },
    () => undefined,
  );
  return ephemeralPortsStart;
}

/** Ports this process has handed out: two callers that have not yet bound theirs must not share one. */
const handedOut = new Set<number>();

/**
 * A port that is free right now, for a server that binds it later (a child process, say).
 *
 * Not one the kernel picks for port 0: those come from its ephemeral range, which is also where
 * every outgoing connection takes its local port, and a connection's local port cannot be listened
 * on (EADDRINUSE). Between the pick and the bind any connection of any process (a database pool's,
 * a test's request) could take it, and did: a test run's API processes failed to start on it. So the
 * port is drawn from below that range, where only a listener can take it. Another listener still can.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const below = await readEphemeralPortsStart();
  if (below !== undefined && below - FREE_PORTS_FROM >= 1_000) {
    for (let attempt = 0; attempt < 100; attempt += 1) {
      const port = FREE_PORTS_FROM + randomInt(below - FREE_PORTS_FROM);
      if (handedOut.has(port)) continue;
      // Reserved before the probe: a caller drawing the same port meanwhile must not get it too.
      handedOut.add(port);
      if (await isPortFree(port, host)) return port;
      handedOut.delete(port);
    }
  }
  return anyFreePort(host);
}

/** The port the kernel gives a listener on port 0 (from its ephemeral range). */
function anyFreePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen({ port: 0, host, exclusive: true }, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** `preferred` when it is free, else any free port; 0 means "any". */
export async function preferredPort(preferred: number, host = '127.0.0.1'): Promise<number> {
  if (preferred > 0 && (await isPortFree(preferred, host))) return preferred;
  return freePort(host);
}

/**
 * The first base port, from `from` up to `below` in steps of `step`, whose ports `base + offset`
 * (for every offset) are all free: for servers that derive several ports from one.
 */
export async function freePortBlock(offsets: number[], range: { from: number; below: number; step: number }): Promise<number> {
  for (let base = range.from; base + Math.max(...offsets) < range.below; base += range.step) {
    const free = await Promise.all(offsets.map((offset) => isPortFree(base + offset)));
    if (free.every(Boolean)) return base;
  }
  throw new Error(`no free block of ports between ${range.from} and ${range.below}`);
}
