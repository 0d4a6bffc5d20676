import { readFileSync } from 'node:fs';
import net from 'node:net';
import { once } from 'node:events';
import { freePort } from '../../src/dev/ports';

/** The kernel's range for outgoing connections' local ports (Linux). */
const [ephemeralFrom, ephemeralTo] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);

async function listen(port: number): Promise<net.Server> {
  const server = net.createServer();
  server.listen({ port, host: '127.0.0.1' });
  await once(server, 'listening');
  return server;
}

test('an outgoing connection\'s local port cannot be listened on (why free ports are not taken from that range)', async () => {
  const target = await listen(0);
  const client = net.connect((target.address() as net.AddressInfo).port, '127.0.0.1');
  await once(client, 'connect');
  try {
    expect(client.localPort).toBeGreaterThanOrEqual(ephemeralFrom);
    expect(client.localPort).toBeLessThanOrEqual(ephemeralTo);
    await expect(listen(client.localPort!)).rejects.toMatchObject({ code: 'EADDRINUSE' });
  } finally {
    client.destroy();
    target.close();
  }
});

test('free ports come from below the range outgoing connections take theirs from, can be listened on, and differ', async () => {
  const ports = await Promise.all(Array.from({ length: 40 }, () => freePort()));
  expect(new Set(ports).size).toBe(ports.length);
  for (const port of ports) expect(port).toBeLessThan(ephemeralFrom);
  const servers = await Promise.all(ports.map(listen));
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
});

test('callers asking at the same moment never get the same port', async () => {
  // Far more callers than the 40 above, so that two of them draw the same port while both probe it.
  const ports = await Promise.all(Array.from({ length: 1_500 }, () => freePort()));
  expect(ports.length - new Set(ports).size).toBe(0);
});
