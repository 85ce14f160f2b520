/**
 * The SSRF guard at the network edge (DESIGN.md section 9): resolves a webhook host and checks
 * every address with the pure classification of ../domain/ssrf.ts. Used at create, PUT, PATCH
 * and test (answering 422 on `url`), and as the `lookup` of every delivery connection, so the
 * socket connects to exactly the address that was checked: a DNS answer that changes between the
 * check and the connect (DNS rebinding) cannot redirect a delivery to a private address.
 * `MSG_ALLOW_PRIVATE_WEBHOOK_TARGETS=true` (config `allowPrivateWebhookTargets`) is the only way
 * around it.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { classifyAddress } from '../domain/ssrf';
import { config } from '../config';

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

/** Throws {@link TargetRefusedError} unless every address is public (or private targets are allowed). */
function checkAll(host: string, addrs: LookupAddress[]) {
  if (config().allowPrivateWebhookTargets) return;
  for (const a of addrs) {
    const cls = classifyAddress(a.address) ?? 'unknown';
    if (cls !== 'public') throw new TargetRefusedError(host, a.address, cls);
  }
}

/** The addresses `host` resolves to, each checked; IP literals are checked as they are. */
export async function resolveChecked(host: string): Promise<LookupAddress[]> {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  const family = isIP(bare);
  const addrs = family ? [{ address: bare, family }] : await resolver(bare);
  if (addrs.length === 0) throw Object.assign(new Error(`${host} has no addresses`), { code: 'ENOTFOUND' });
  checkAll(host, addrs);
  return addrs;
}

/**
 * Why a webhook URL must be refused at create, PUT, PATCH or test (a 422 message), or undefined.
 * The URL's syntax has been checked already. WHATWG URL parsing has already turned decimal and
 * hex IPv4 hosts into dotted quads.
 */
export async function targetProblem(url: string): Promise<string | undefined> {
  if (config().allowPrivateWebhookTargets) return undefined;
  const host = new URL(url).hostname;
  try {
    await resolveChecked(host);
    return undefined;
  } catch (e) {
    if (e instanceof TargetRefusedError) return `must not target ${e.cls} addresses (${e.address}); webhooks only reach public addresses`;
    return `host ${host} does not resolve`;
  }
}

/**
 * A `net.connect` lookup that resolves, checks every address, and hands the socket only checked
 * addresses. Node calls it with `all: true` when it races address families (autoSelectFamily).
 */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  resolveChecked(hostname).then(
    (addrs) => {
      const wanted = options.family ? addrs.filter((a) => a.family === options.family) : addrs;
      const list = wanted.length ? wanted : addrs;
      if (options.all) (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      else callback(null, list[0].address, list[0].family);
    },
    (e: NodeJS.ErrnoException) => callback(e, '', 0),
  );
};
