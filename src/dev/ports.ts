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
