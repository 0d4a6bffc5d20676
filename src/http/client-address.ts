import { isIPv6 } from 'node:net';

/**
 * The address a client's limits are kept under. An IPv4 address is itself (an IPv4-mapped IPv6
 * address too); an IPv6 address is its /64, since one subscriber is routinely given a whole /64 and
 * would otherwise get a fresh allowance with every one of its 2^64 addresses.
 */
export function clientAddressKey(ip: string): string {
  const address = ip.split('%')[0]; // a zone (fe80::1%eth0) names the interface, not the client
  if (!isIPv6(address)) return address;
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (mapped) return mapped[1];
  // The groups before and after "::" (which stands for enough zero groups to make eight); a dotted
  // IPv4 tail fills the last two groups, beyond the /64.
  const [head, tail] = address.split('::').map((part) => (part ? part.split(':') : []));
  const groups = tail === undefined
    ? head
    : [...head, ...Array<string>(8 - head.length - tail.flatMap((g) => (g.includes('.') ? [g, g] : [g])).length).fill('0'), ...tail];
  return `${groups.slice(0, 4).map((g) => parseInt(g, 16).toString(16)).join(':')}::/64`;
}
