import net from 'node:net';

/** True when nothing listens on host:port (we can bind it ourselves). */
export function isPortFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** A port the OS says is free right now (another process may still take it before we do). */
export function freePort(host = '127.0.0.1'): Promise<number> {
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
