/**
 * The SSRF guard at the network edge (DESIGN.md section 9): resolves a webhook host and checks
 * every address with the pure classification of ../domain/ssrf.ts. Used at create, PUT, PATCH
 * and test (answering 422 on `url`), and as the `lookup` of every delivery connection, so the
 * socket connects to exactly the address that was checked: a DNS answer that changes between the
 * check and the connect (DNS rebinding) cannot redirect a delivery to a private address.
 * `MSG_ALLOW_PRIVATE_WEBHOOK_TARGETS=true` (config `allowPrivateWebhookTargets`) is the only way
 * around it, and even then the runtime's own endpoints (config `runtimeEndpoints`: the local
 * gateway and engines) are refused on every address of this machine.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { networkInterfaces } from 'node:os';
import { classifyAddress, isOwnEndpoint } from '../rules/ssrf';
import { config } from '../../core/config';

/** Error code of a connection refused by the guard. */
export const TARGET_REFUSED = 'EWEBHOOKTARGET';

export class TargetRefusedError extends Error {
  readonly code = TARGET_REFUSED;
  constructor(readonly host: string, readonly address: string, readonly cls: string) {
    super(`${host} resolves to ${cls} address ${address}; webhooks only reach public addresses`);
    this.name = 'TargetRefusedError';
  }
}

type Resolver = (host: string) => Promise<LookupAddress[]>;

const systemResolver: Resolver = (host) =>
  new Promise((resolve, reject) => dnsLookup(host, { all: true, verbatim: true }, (err, addrs) => (err ? reject(err) : resolve(addrs))));

let resolver: Resolver = systemResolver;
/** Lets tests answer DNS themselves (rebinding scenarios); `undefined` restores the system's. */
export function setResolver(r: Resolver | undefined) {
  resolver = r ?? systemResolver;
}

/** The class a refused address of the runtime itself is reported with. */
export const OWN_ENDPOINT = 'the runtime\'s own endpoint';

/** This machine's interface addresses (the runtime's own endpoints may answer on them). */
function localAddresses(): Set<string> {
  const out = new Set<string>();
  for (const list of Object.values(networkInterfaces())) for (const i of list ?? []) out.add(i.address.toLowerCase());
  return out;
}

/** The addresses of the runtime endpoints given by host name (rare: an engine in another container). */
async function endpointAddresses(): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (const e of config().runtimeEndpoints) {
    if (isIP(e.host) || e.host === 'localhost' || out.has(e.host)) continue;
    try {
      out.set(e.host, (await resolver(e.host)).map((a) => a.address.toLowerCase()));
    } catch {
      out.set(e.host, []);
    }
  }
  return out;
}

/**
 * Throws {@link TargetRefusedError} for an address of the runtime's own endpoints on `port`
 * (always), or one that is not public (unless private targets are allowed).
 */
async function checkAll(host: string, addrs: LookupAddress[], port: number | undefined) {
  const own = config().runtimeEndpoints;
  if (own.length > 0 && port !== undefined) {
    const [local, named] = [localAddresses(), await endpointAddresses()];
    for (const a of addrs) if (isOwnEndpoint(a.address, port, own, local, named)) throw new TargetRefusedError(host, a.address, OWN_ENDPOINT);
  }
  if (config().allowPrivateWebhookTargets) return;
  for (const a of addrs) {
    const cls = classifyAddress(a.address) ?? 'unknown';
    if (cls !== 'public') throw new TargetRefusedError(host, a.address, cls);
  }
}

/**
 * The addresses `host` resolves to, each checked; IP literals are checked as they are. `port` is
 * the target's (for the check against the runtime's own endpoints).
 */
export async function resolveChecked(host: string, port?: number): Promise<LookupAddress[]> {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  const family = isIP(bare);
  const addrs = family ? [{ address: bare, family }] : await resolver(bare);
  if (addrs.length === 0) throw Object.assign(new Error(`${host} has no addresses`), { code: 'ENOTFOUND' });
  await checkAll(host, addrs, port);
  return addrs;
}

/** The port a URL connects to. */
export const portOf = (u: URL) => Number(u.port || (u.protocol === 'https:' ? 443 : 80));

/**
 * Why a webhook URL must be refused at create, PUT, PATCH or test (a 422 message), or undefined.
 * The URL's syntax has been checked already. WHATWG URL parsing has already turned decimal and
 * hex IPv4 hosts into dotted quads.
 */
export async function targetProblem(url: string): Promise<string | undefined> {
  const u = new URL(url);
  if (config().allowPrivateWebhookTargets && config().runtimeEndpoints.length === 0) return undefined;
  try {
    await resolveChecked(u.hostname, portOf(u));
    return undefined;
  } catch (e) {
    if (e instanceof TargetRefusedError && e.cls === OWN_ENDPOINT) {
      return `must not target ${OWN_ENDPOINT} (${e.address} port ${portOf(u)}: the local gateway, DynamoDB Local or fauxqs); point the webhook at a receiver of its own`;
    }
    if (e instanceof TargetRefusedError) return `must not target ${e.cls} addresses (${e.address}); webhooks only reach public addresses`;
    // With private targets allowed, a host that does not resolve now may later (a local receiver not started yet).
    if (config().allowPrivateWebhookTargets) return undefined;
    return `host ${u.hostname} does not resolve`;
  }
}

/**
 * A `net.connect` lookup that resolves, checks every address, and hands the socket only checked
 * addresses. Node calls it with `all: true` when it races address families (autoSelectFamily).
 * A lookup does not know the port, so one checking for the runtime's own endpoints is made per
 * port.
 */
export const guardedLookupFor = (port: number | undefined): LookupFunction => (hostname, options, callback) => {
  resolveChecked(hostname, port).then(
    (addrs) => {
      const wanted = options.family ? addrs.filter((a) => a.family === options.family) : addrs;
      const list = wanted.length ? wanted : addrs;
      if (options.all) (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      else callback(null, list[0].address, list[0].family);
    },
    (e: NodeJS.ErrnoException) => callback(e, '', 0),
  );
};
