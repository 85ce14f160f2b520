/**
 * The local engines listen on the loopback interface only: DynamoDB Local and
 * fauxqs hold every namespace's data, keys and webhook secrets, check no credentials, and would
 * otherwise answer anyone on the network.
 *
 * - DynamoDB Local has no listen-address option, so local/dynamodb.ts starts it through a small
 *   launcher (local/dynamodb-loopback/LoopbackDynamoDbLocal.java) that binds its Jetty connector to
 *   127.0.0.1 before starting it.
 * - fauxqs 2.4 calls `app.listen({ port, host: "0.0.0.0" })` (dist/app.js, `startFauxqs`), with no
 *   option to change it, so {@link onLoopbackOnly} rewrites the host of the listen calls made while
 *   it starts. The same rewrite is inlined in the child-process start (local/fauxqs.ts).
 */
import { Server } from 'node:net';

const LOOPBACK_HOST = '127.0.0.1';

/** Whether `address` (as a socket reports it) is a loopback address. */
function isLoopback(address: string): boolean {
  const a = address.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  return /^127\./.test(a) || a === '::1' || /^::ffff:127\./.test(a) || a === 'localhost';
}

type ListenFn = (...args: unknown[]) => Server;

/**
 * Runs `start` with every `net.Server#listen` on a host other than loopback made to listen on
 * 127.0.0.1 instead (a listen without a host, which Node binds to every interface, too). The
 * patch is removed when `start` settles; engines start one at a time, so nothing else listens
 * meanwhile in this process but those engines.
 */
export async function onLoopbackOnly<T>(start: () => Promise<T>): Promise<T> {
  const original = Server.prototype.listen as unknown as ListenFn;
  const patched: ListenFn = function (this: Server, ...args: unknown[]) {
    const [first] = args;
    if (first && typeof first === 'object' && !('fd' in first) && !('path' in (first as object) && (first as { path?: unknown }).path)) {
      const opts = first as { host?: string };
      if (!opts.host || !isLoopback(opts.host)) args[0] = { ...opts, host: LOOPBACK_HOST };
    } else if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
      // listen(port[, host][, backlog][, cb])
      if (typeof args[1] === 'string') {
        if (!isLoopback(args[1])) args[1] = LOOPBACK_HOST;
      } else args.splice(1, 0, LOOPBACK_HOST);
    }
    return original.apply(this, args);
  };
  Server.prototype.listen = patched as unknown as typeof Server.prototype.listen;
  try {
    return await start();
  } finally {
    Server.prototype.listen = original as unknown as typeof Server.prototype.listen;
  }
}

/** The same rewrite as {@link onLoopbackOnly}, as JavaScript source for a child process's `-e` script. */
export const LOOPBACK_LISTEN_PATCH_JS = `
const net = await import('node:net');
const listen = net.Server.prototype.listen;
const loop = (h) => typeof h === 'string' && (/^127\\./.test(h) || h === '::1' || h === 'localhost');
net.Server.prototype.listen = function (...args) {
  const f = args[0];
  if (f && typeof f === 'object' && !('fd' in f) && !f.path) { if (!loop(f.host)) args[0] = { ...f, host: '127.0.0.1' }; }
  else if (typeof f === 'number') { if (typeof args[1] === 'string') { if (!loop(args[1])) args[1] = '127.0.0.1'; } else args.splice(1, 0, '127.0.0.1'); }
  return listen.apply(this, args);
};
`;
