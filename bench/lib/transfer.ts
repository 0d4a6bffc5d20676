/**
 * One HTTP GET made from a child process of its own, so that the client never shares the measured
 * server's event loop or CPU accounting: its status, bytes, time to first byte and total time.
 */
import { fork } from 'node:child_process';
import http from 'node:http';
import { exitOnFailure } from './run';

export interface Transfer {
  bytes: number;
  /** From the request to the response's headers. */
  ttfbMs: number;
  ms: number;
  status: number;
}

/** Client mode (this module run as a child): one GET, the body counted and dropped. */
function runClient(url: string): void {
  const started = process.hrtime.bigint();
  const since = () => Number(process.hrtime.bigint() - started) / 1e6;
  http.get(url, (res) => {
    const ttfbMs = since();
    let bytes = 0;
    res.on('data', (chunk: Buffer) => { bytes += chunk.length; });
    res.on('end', () => {
      process.send!({ bytes, ttfbMs, ms: since(), status: res.statusCode ?? 0 } satisfies Transfer, () => process.exit(0));
    });
  }).on('error', exitOnFailure);
}

/** One GET of `url` (127.0.0.1 only), made by a child process. */
export function transfer(url: string): Promise<Transfer> {
  if (new URL(url).hostname !== '127.0.0.1') throw new Error('benchmarks send traffic to 127.0.0.1 only');
  return new Promise((resolve, reject) => {
    const child = fork(__filename, ['client', url], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.once('message', (message) => resolve(message as Transfer));
    child.once('exit', (code) => { if (code !== 0) reject(new Error(`client exited with ${code}`)); });
  });
}

if (require.main === module && process.argv[2] === 'client') runClient(process.argv[3]);
