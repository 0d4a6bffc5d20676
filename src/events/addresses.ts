/**
 * Where outbound webhooks may go (decisions §13): `https://` to public addresses only, checked when
 * an endpoint is saved and again at every connection, after DNS resolution, on the address the
 * socket then connects to (a name that later resolves inward is refused for that attempt).
 * OUTBOUND_WEBHOOKS_ALLOW_PRIVATE lifts the scheme and address rules (development and tests).
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { ValidationError } from '../domain/errors';

/** Ranges that are not the public internet, each with the words a 400 uses. */
const NON_PUBLIC: Array<[address: string, prefix: number, family: 'ipv4' | 'ipv6', what: string]> = [
  ['0.0.0.0', 8, 'ipv4', 'a "this network" address'],
  ['10.0.0.0', 8, 'ipv4', 'a private address'],
  ['100.64.0.0', 10, 'ipv4', 'a shared (carrier-grade NAT) address'],
  ['127.0.0.0', 8, 'ipv4', 'a loopback address'],
  ['169.254.0.0', 16, 'ipv4', 'a link-local address'],
  ['172.16.0.0', 12, 'ipv4', 'a private address'],
  ['192.0.0.0', 24, 'ipv4', 'a reserved address'],
  ['192.0.2.0', 24, 'ipv4', 'a documentation address'],
  ['192.168.0.0', 16, 'ipv4', 'a private address'],
  ['198.18.0.0', 15, 'ipv4', 'a benchmarking address'],
  ['198.51.100.0', 24, 'ipv4', 'a documentation address'],
  ['203.0.113.0', 24, 'ipv4', 'a documentation address'],
  ['224.0.0.0', 4, 'ipv4', 'a multicast address'],
  ['240.0.0.0', 4, 'ipv4', 'a reserved address'],
  ['::', 128, 'ipv6', 'the unspecified address'],
  ['::1', 128, 'ipv6', 'a loopback address'],
  // An IPv4 address written as IPv6 reaches that IPv4 address: none is let through.
  ['::ffff:0:0', 96, 'ipv6', 'an IPv4-mapped IPv6 address'],
  ['::', 96, 'ipv6', 'an IPv4-compatible IPv6 address'],
  ['64:ff9b::', 96, 'ipv6', 'a NAT64 address'],
  ['100::', 64, 'ipv6', 'a discard address'],
  ['2001:db8::', 32, 'ipv6', 'a documentation address'],
  ['fc00::', 7, 'ipv6', 'a unique local (private) address'],
  ['fe80::', 10, 'ipv6', 'a link-local address'],
  ['ff00::', 8, 'ipv6', 'a multicast address'],
];

const RANGES = NON_PUBLIC.map(([address, prefix, family, what]) => {
  const list = new BlockList();
  list.addSubnet(address, prefix, family);
  return { list, family, what };
});

/** Why `ip` is not a public address, or null when it is. */
export function nonPublicReason(ip: string): string | null {
  const family = isIP(ip) === 6 ? 'ipv6' : 'ipv4';
  return RANGES.find((r) => r.family === family && r.list.check(ip, family))?.what ?? null;
}

export class AddressRefusedError extends Error {
  override name = 'AddressRefusedError';
}

/** The host as a bare IP when the URL names one (`[::1]` → `::1`), else null. */
function literalIp(hostname: string): string | null {
  const bare = hostname.replace(/^\[|\]$/g, '');
  return isIP(bare) === 0 ? null : bare;
}

function refuseNonPublic(host: string, addresses: string[]): void {
  for (const address of addresses) {
    const reason = nonPublicReason(address);
    if (reason) throw new AddressRefusedError(address === host ? `${host} is ${reason}` : `${host} resolves to ${address}, ${reason}`);
  }
}

function resolveAll(hostname: string, options: LookupOptions = {}): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => (error ? reject(error) : resolve(addresses)));
  });
}

/**
 * The endpoint URL as saved: parsed, the scheme allowed, the host resolved and every address it
 * resolves to public. Throws a ValidationError (400) that says what is wrong.
 */
export async function checkEndpointUrl(text: string, allowPrivate: boolean): Promise<string> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ValidationError('url: not a valid absolute URL');
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) {
    throw new ValidationError(`url: the scheme must be https (${url.protocol.replace(/:$/, '')} is not allowed)`);
  }
  if (url.username !== '' || url.password !== '') throw new ValidationError('url: must not carry a user name or password');
  if (url.hash !== '') throw new ValidationError('url: must not have a #fragment');
  if (allowPrivate) return url.toString();
  const ip = literalIp(url.hostname);
  try {
    refuseNonPublic(url.hostname, ip ? [ip] : (await resolveAll(url.hostname)).map((a) => a.address));
  } catch (error) {
    if (error instanceof AddressRefusedError) throw new ValidationError(`url: ${error.message}; only public addresses are allowed`);
    throw new ValidationError(`url: ${url.hostname} does not resolve (${(error as NodeJS.ErrnoException).code ?? 'DNS error'})`);
  }
  return url.toString();
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http(s).request: resolves the name, refuses it when any address is not public,
 * and hands the socket exactly the addresses it checked, so the connection goes where the check
 * looked (a name rebound between check and connect cannot slip through).
 */
export function publicOnlyLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  resolveAll(hostname, { family: options.family, hints: options.hints }).then((addresses) => {
    refuseNonPublic(hostname, addresses.map((a) => a.address));
    if (options.all) callback(null, addresses);
    else callback(null, addresses[0].address, addresses[0].family);
  }).catch((error: NodeJS.ErrnoException) => callback(error, ''));
}

/** At connection time, a URL that names an IP itself (no lookup happens): refused unless public. */
export function checkLiteralHost(url: URL): void {
  const ip = literalIp(url.hostname);
  if (ip) refuseNonPublic(url.hostname, [ip]);
}
