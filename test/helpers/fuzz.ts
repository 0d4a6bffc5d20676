/**
 * The pieces of the seeded fuzz tests: random bodies of every shape a client can send (bytes,
 * huge strings, deeply nested JSON, forms, multipart broken in many ways, odd content types), and
 * a raw HTTP sender that sends exactly that, repeated headers included.
 */
import http from 'node:http';
import type { Rng } from './prng';

/** Values the generators use besides random text: ids and words the routes know. */
export interface FuzzVocabulary {
  words: string[];
  jsonKeys: string[];
  formKeys: string[];
}

/**
 * Text PostgreSQL cannot store as given (NUL; lone surrogates, which would become U+FFFD), sent in
 * every kind of field: each must be a 4xx, never a 5xx or a silently changed value.
 */
export const UNSTORABLE_TEXT = ['\u0000', 'a\u0000b', 'a\u0000b@example.com', '\ud800', 'x\udfffy', 'pi_\ud83d'];

export interface Body {
  type?: string | string[];
  payload?: Buffer;
  label: string;
}

function jsonValue(r: Rng, v: FuzzVocabulary, depth = 0): unknown {
  const kind = r.int(depth > 3 ? 5 : 8);
  switch (kind) {
    case 0: return null;
    case 1: return r.next() * 1e20 - 1e10;
    case 2: return r.text(r.int(50));
    case 3: return r.next() < 0.5;
    case 4: return r.int(3) === 0 ? '' : r.pick([...v.words, ...UNSTORABLE_TEXT]);
    case 5: return Array.from({ length: r.int(4) }, () => jsonValue(r, v, depth + 1));
    default: {
      const keys = [...v.jsonKeys, '__proto__', 'constructor', 'prototype', r.text(8)];
      return Object.fromEntries(Array.from({ length: r.int(5) }, () => [r.pick(keys), jsonValue(r, v, depth + 1)]));
    }
  }
}

function multipart(r: Rng, boundary: string, broken: boolean): Buffer {
  const parts: string[] = [];
  for (let i = 0; i < r.int(5); i++) {
    const name = r.pick(['version', 'file', 'activate', 'productId', 'customerId', 'amount', r.text(6)]);
    const file = r.next() < 0.4 ? `; filename="${r.pick(['a.zip', '../../etc/passwd', '', r.text(10)])}"` : '';
    parts.push(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"${file}\r\n\r\n${r.text(r.int(200))}\r\n`);
  }
  let body = `${parts.join('')}--${boundary}--\r\n`;
  if (broken) body = r.pick([body.slice(0, Math.max(1, r.int(body.length))), body.replace(/\r\n/g, '\n'), `--${boundary}\r\nnonsense`, body.replaceAll(boundary, 'other')]);
  return Buffer.from(body, 'latin1');
}

/** One request of `unstorableCases`: a query string to append and a body. */
export interface UnstorableCase {
  query: string;
  body: Body;
}

/**
 * Every field named in `keys` set to each unstorable text, one at a time, beside otherwise valid
 * fields (`valid()`, fresh for each case, so that the request gets as far as storing): in the query
 * (NUL: a lone surrogate has no percent-encoding), as a JSON body, and as a form body (NUL, for the
 * same reason). Deterministic, so each route meets each field with each text.
 */
export function unstorableCases(keys: string[], valid: () => Record<string, string>): UnstorableCase[] {
  const json = (fields: object, label: string): Body => ({ type: 'application/json', payload: Buffer.from(JSON.stringify(fields)), label });
  return keys.flatMap((key) => [
    { query: `?${new URLSearchParams({ ...valid(), [key]: 'a\u0000b' })}`, body: { label: `query ${key}=NUL` } },
    ...UNSTORABLE_TEXT.map((text) => ({ query: '', body: json({ ...valid(), [key]: text }, `json ${key}=${JSON.stringify(text)}`) })),
    {
      query: '',
      body: {
        type: 'application/x-www-form-urlencoded',
        payload: Buffer.from(new URLSearchParams({ ...valid(), [key]: 'a\u0000b' }).toString()),
        label: `form ${key}=NUL`,
      },
    },
  ]);
}

export function randomBody(r: Rng, method: string, v: FuzzVocabulary): Body {
  if (method === 'GET' && r.next() < 0.7) return { label: 'none' };
  const boundary = `----fuzz${r.int(1e9)}`;
  switch (r.int(13)) {
    case 0: return { label: 'none' };
    case 1: return { type: r.pick([undefined, 'application/octet-stream', 'text/plain', 'application/json']), payload: r.bytes(r.int(4096)), label: 'random bytes' };
    case 2: return { type: r.pick(['application/json', 'application/x-www-form-urlencoded', 'text/plain']), payload: Buffer.alloc(2 * 1024 * 1024 + r.int(1000), 'a'), label: 'huge string' };
    case 3: { const n = 1000 + r.int(100_000); return { type: 'application/json', payload: Buffer.from('['.repeat(n) + ']'.repeat(n)), label: `nested arrays ${n}` }; }
    case 4: { const n = 500 + r.int(20_000); return { type: 'application/json', payload: Buffer.from('{"a":'.repeat(n) + '1' + '}'.repeat(n)), label: `nested objects ${n}` }; }
    case 5:
    case 6: return { type: r.pick(['application/json', 'application/json; charset=utf-8', 'application/json; charset=latin1', 'Application/JSON']), payload: Buffer.from(JSON.stringify(jsonValue(r, v))), label: 'json of random types' };
    case 7: return { type: 'application/json', payload: Buffer.from(r.pick(['{', '{"a":1,}', 'nul', '"\\ud800"', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{"x":1}}}', '1'.repeat(400)])), label: 'malformed json' };
    case 8: {
      const keys = [...v.formKeys, 'a[b]', '__proto__', '%zz'];
      const values = [...v.words, '%', '%zz', 'a@b.c', '%00', 'a%00b', r.text(20), 'x'.repeat(r.int(3) * 1000)];
      const form = Array.from({ length: r.int(12) }, () => `${r.pick(keys)}=${r.pick(values)}`).join('&');
      return { type: 'application/x-www-form-urlencoded', payload: Buffer.from(form, 'latin1'), label: 'form' };
    }
    case 9: return { type: `multipart/form-data; boundary=${boundary}`, payload: multipart(r, boundary, false), label: 'multipart' };
    case 10: return { type: r.pick([`multipart/form-data; boundary=${boundary}`, 'multipart/form-data', 'multipart/form-data; boundary=', `multipart/form-data; boundary="${boundary}`]), payload: multipart(r, boundary, true), label: 'broken multipart' };
    case 11: return { type: r.pick(['text/plain', 'text/html', 'application/xml', ';;;', 'x/y; a=b', '', '*/*']), payload: Buffer.from(r.text(r.int(500))), label: 'odd content type' };
    default: return { type: ['application/json', 'application/x-www-form-urlencoded'], payload: Buffer.from('{"a":1}'), label: 'duplicated content-type' };
  }
}

/** Header name/value pairs: a name may repeat (duplicated headers are part of the fuzz). */
export type Headers = Array<[string, string]>;

export interface Answer {
  status: number;
  body: string;
}

export function sendRaw(base: string, method: string, path: string, headers: Headers, payload?: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    // The flat [name, value, name, value ...] form sends repeated names as they are, and adds neither
    // Host nor, for a GET, the body's framing: both are given here.
    const framing: Headers = payload === undefined ? [] : [['content-length', String(payload.length)]];
    const raw = [['host', new URL(base).host], ...headers, ...framing].flat();
    // A fresh connection per case (agent: false), so one case's broken request cannot spoil the next.
    const req = http.request(`${base}${path}`, { method, headers: raw, agent: false, timeout: 15_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8').slice(0, 300) }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('no answer within 15 s')));
    // The server may answer (413, 401 ...) and close before a big body is all sent: not a failure.
    const earlyClose = (error: NodeJS.ErrnoException) => (payload?.length ?? 0) > 0 && (error.code === 'EPIPE' || error.code === 'ECONNRESET');
    req.on('error', (error: NodeJS.ErrnoException) => (earlyClose(error) ? resolve({ status: 0, body: error.code ?? '' }) : reject(error)));
    req.end(payload);
  });
}

