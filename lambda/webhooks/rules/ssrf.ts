/**
 * Which addresses a webhook may reach (DESIGN.md section 9): only public unicast. Loopback,
 * private, link-local (169.254.169.254, the instance metadata service, included), CGNAT,
 * multicast and reserved ranges are refused, in IPv4, IPv6 and IPv4 embedded in IPv6
 * (`::ffff:10.0.0.1`, NAT64, 6to4). Host literals in the forms `inet_aton` accepts (decimal
 * `2130706433`, hex `0x7f000001`, octal `0177.0.0.1`, short `127.1`) are normalised first, so
 * every spelling of an address gets the same verdict. Pure: no DNS here (adapters/target-guard.ts
 * resolves and asks this module about each address).
 */
import { isIPv4, isIPv6 } from 'node:net';

export type AddressClass = 'public' | 'loopback' | 'private' | 'link-local' | 'cgnat' | 'multicast' | 'reserved' | 'unspecified';

interface Range {
  base: bigint;
  bits: number;
  cls: AddressClass;
}

/** IPv4 ranges that are not public unicast (IANA IPv4 Special-Purpose Address Registry, RFC 6890). */
const V4_RANGES: [string, number, AddressClass][] = [
  ['0.0.0.0', 8, 'unspecified'], // "this network"; 0.0.0.0 reaches the local host on Linux
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'cgnat'], // RFC 6598 shared address space
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'], // includes 169.254.169.254 (instance metadata)
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved'], // IETF protocol assignments
  ['192.0.2.0', 24, 'reserved'], // TEST-NET-1
  ['192.88.99.0', 24, 'reserved'], // deprecated 6to4 relay anycast
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'reserved'], // benchmarking
  ['198.51.100.0', 24, 'reserved'], // TEST-NET-2
  ['203.0.113.0', 24, 'reserved'], // TEST-NET-3
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'], // future use, and 255.255.255.255 broadcast
];

/** IPv6 ranges that are not public unicast (IANA IPv6 Special-Purpose Address Registry). */
const V6_RANGES: [string, number, AddressClass][] = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['64:ff9b:1::', 48, 'private'], // local-use NAT64 (RFC 8215)
  ['100::', 64, 'reserved'], // discard-only
  ['2001::', 23, 'reserved'], // IETF protocol assignments (Teredo, ORCHID, ...)
  ['2001:db8::', 32, 'reserved'], // documentation
  ['3fff::', 20, 'reserved'], // documentation (RFC 9637)
  ['5f00::', 16, 'reserved'], // SRv6 SIDs
  ['fc00::', 7, 'private'], // unique local
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'private'], // deprecated site-local
  ['ff00::', 8, 'multicast'],
];


function parseV4Strict(s: string): number[] | undefined {
  if (!isIPv4(s)) return undefined;
  return s.split('.').map(Number);
}

const v4ToBig = (b: number[]) => BigInt(((b[0] << 24) >>> 0) + (b[1] << 16) + (b[2] << 8) + b[3]);

function inRange(value: bigint, width: number, r: Range): boolean {
  const shift = BigInt(width - r.bits);
  return value >> shift === r.base >> shift;
}

/**
 * Parses an IPv4 host the way `inet_aton` does: 1 to 4 parts, each decimal, `0x` hex or
 * leading-zero octal, the last part filling the remaining bytes. Returns the dotted quad, or
 * undefined when `host` is not such a literal.
 * @example normalizeIPv4Literal('0x7f000001') // '127.0.0.1'
 * @example normalizeIPv4Literal('2130706433') // '127.0.0.1'
 */
export function normalizeIPv4Literal(host: string): string | undefined {
  const parts = host.split('.');
  if (parts.length === 0 || parts.length > 4) return undefined;
  const nums: number[] = [];
  for (const p of parts) {
    let n: number;
    if (/^0x[0-9a-f]*$/i.test(p)) n = p.length === 2 ? 0 : parseInt(p.slice(2), 16);
    else if (/^0[0-7]+$/.test(p)) n = parseInt(p, 8);
    else if (/^(0|[1-9]\d*)$/.test(p)) n = Number(p);
    else return undefined;
    if (!Number.isSafeInteger(n)) return undefined;
    nums.push(n);
  }
  const last = nums.pop() as number;
  if (nums.some((n) => n > 255)) return undefined;
  const lastBytes = 4 - nums.length;
  if (last >= 2 ** (8 * lastBytes)) return undefined;
  const bytes = [...nums];
  for (let i = lastBytes - 1; i >= 0; i--) bytes.push(Math.floor(last / 2 ** (8 * i)) % 256);
  return bytes.join('.');
}

/** Parses an IPv6 address (optionally with a trailing dotted quad or a `%zone`) to 128 bits. */
export function parseV6(input: string): bigint | undefined {
  let s = input.replace(/%.*$/, '');
  if (!isIPv6(s)) return undefined;
  // A trailing dotted quad is the last two groups.
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (tail) {
    const b = parseV4Strict(tail[1]);
    if (!b) return undefined;
    s = `${s.slice(0, -tail[1].length)}${((b[0] << 8) | b[1]).toString(16)}:${((b[2] << 8) | b[3]).toString(16)}`;
  }
  const [left, right] = s.includes('::') ? s.split('::') : [s, undefined];
  const l = left ? left.split(':') : [];
  const r = right ? right.split(':') : [];
  const fill = right === undefined ? 0 : 8 - l.length - r.length;
  const groups = [...l, ...Array<string>(Math.max(0, fill)).fill('0'), ...r];
  if (groups.length !== 8) return undefined;
  let out = 0n;
  for (const g of groups) out = (out << 16n) + BigInt(parseInt(g, 16));
  return out;
}

/** Built after the parsers above are initialised. */
const v4Ranges: Range[] = V4_RANGES.map(([a, bits, cls]) => ({ base: v4ToBig(parseV4Strict(a)!), bits, cls }));
const v6Ranges: Range[] = V6_RANGES.map(([a, bits, cls]) => ({ base: parseV6(a)!, bits, cls }));

function classifyV4Big(v: bigint): AddressClass {
  for (const r of v4Ranges) if (inRange(v, 32, r)) return r.cls;
  return 'public';
}

/**
 * Classifies an IP address (IPv4 dotted quad or `inet_aton` literal, or IPv6); undefined when
 * `address` is not an IP literal (a host name to resolve first).
 * @example classifyAddress('169.254.169.254') // 'link-local'
 * @example classifyAddress('::ffff:127.0.0.1') // 'loopback'
 * @example classifyAddress('93.184.216.34') // 'public'
 */
export function classifyAddress(address: string): AddressClass | undefined {
  const host = address.replace(/^\[(.*)\]$/, '$1');
  const v4 = normalizeIPv4Literal(host);
  if (v4) return classifyV4Big(v4ToBig(parseV4Strict(v4)!));
  const v6 = parseV6(host);
  if (v6 === undefined) return undefined;
  // IPv4 embedded in IPv6 gets the verdict of the IPv4 address it carries.
  const low32 = v6 & 0xffffffffn;
  if (v6 >> 32n === 0xffffn) return classifyV4Big(low32); // ::ffff:a.b.c.d mapped
  if (v6 >> 32n === 0x64ff9b0000000000000000n) return classifyV4Big(low32); // 64:ff9b::/96 NAT64
  if (v6 >> 112n === 0x2002n) return classifyV4Big((v6 >> 80n) & 0xffffffffn); // 6to4
  if (v6 >> 32n === 0n && v6 > 1n) return 'reserved'; // deprecated IPv4-compatible ::a.b.c.d
  for (const r of v6Ranges) if (inRange(v6, 128, r)) return r.cls;
  // Everything outside 2000::/3 (global unicast) is unassigned or special.
  if (v6 >> 125n !== 1n) return 'reserved';
  return 'public';
}

/** Whether webhooks may be delivered to `address`. */
export const isPublicAddress = (address: string) => classifyAddress(address) === 'public';

/**
 * Why a webhook URL is not an acceptable target on its face (scheme, syntax), or undefined.
 * Addresses are checked separately, after resolution.
 */
export function webhookUrlProblem(url: string): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'must be an absolute http or https URL';
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return 'must use http or https';
  if (!u.hostname) return 'must name a host';
  if (u.username || u.password) return 'must not carry credentials; use headers instead';
  return undefined;
}

/** An endpoint of the runtime itself (config `runtimeEndpoints`). */
export interface OwnEndpoint {
  host: string;
  port: number;
}

/**
 * Whether a connection to `address`:`port` would reach one of the runtime's own endpoints (the
 * local gateway, DynamoDB Local, fauxqs): the endpoint's own address, or, for an endpoint on this
 * machine, any address of this machine (loopback, unspecified `0.0.0.0`/`::`, which Linux connects
 * to the local host, and `localAddresses`, the machine's interface addresses) on its port.
 * `endpointAddresses` are the addresses the endpoints' host names resolve to.
 * @example isOwnEndpoint('127.0.0.2', 8000, [{ host: '127.0.0.1', port: 8000 }], new Set()) // true
 */
export function isOwnEndpoint(address: string, port: number, endpoints: readonly OwnEndpoint[], localAddresses: ReadonlySet<string>, endpointAddresses: ReadonlyMap<string, readonly string[]> = new Map()): boolean {
  const bare = address.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  const v4 = normalizeIPv4Literal(bare) ?? (/^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(bare)?.[1]);
  const norm = v4 ?? bare;
  const cls = classifyAddress(norm);
  const onThisMachine = (a: string) => {
    const c = classifyAddress(a);
    return c === 'loopback' || c === 'unspecified' || localAddresses.has(a) || a === 'localhost';
  };
  for (const e of endpoints) {
    if (e.port !== port) continue;
    const hosts = [e.host.toLowerCase(), ...(endpointAddresses.get(e.host) ?? [])];
    if (hosts.includes(norm)) return true;
    if (hosts.some(onThisMachine) && (cls === 'loopback' || cls === 'unspecified' || localAddresses.has(norm))) return true;
  }
  return false;
}
