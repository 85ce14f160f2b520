/**
 * Sends one webhook request with Node's own HTTP client (DESIGN.md section 9): a hard timeout over
 * the whole exchange (`AbortSignal.timeout`: connect, TLS, headers and body; a 2xx whose body is
 * still arriving at the timeout is a success with the body read so far), redirects never
 * followed (node:http does not follow them; a 3xx is reported as the failure "redirect refused"),
 * 2xx is success, the response body read only up to the 4 KiB that `{{.response}}` may use, TLS
 * options (verify_ssl, CA, client certificate) on a per-setting keep-alive agent, and every
 * connection made through the SSRF guard's lookup (./target-guard.ts).
 *
 * node:https rather than a client library: it has every option this needs, and the delivery
 * bundles stay small (undici was ~715 KB of each of the three webhook bundles).
 */
import { closeSync, constants as fsConstants, fstatSync, openSync, readSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, resolve as resolvePath, sep } from 'node:path';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { config } from '../../core/config';
import { classifyAddress } from '../rules/ssrf';
import { cutResponse, MAX_RESPONSE_BYTES } from '../rules/templates';
import { guardedLookupFor, OWN_ENDPOINT, portOf, resolveChecked, TARGET_REFUSED, TargetRefusedError } from './target-guard';

export interface TlsOptions {
  verify_ssl?: boolean;
  ca_cert?: string;
  client_cert?: string;
  client_key?: string;
}

export interface OutgoingRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: Buffer;
  timeoutSeconds: number;
  tls?: TlsOptions;
  /** The namespace the request is for: TLS files are read from its own folder only. */
  namespace?: string;
}

export interface DeliveryResult {
  ok: boolean;
  /** The receiver's status; null when no answer came (timeout, connection error, refused target). */
  status_code: number | null;
  /** One line: `HTTP 500`, `timeout after 10 s`, `connection refused`, `redirect refused`, ... */
  error: string | null;
  /** The response body as text, at most 4 KiB (for `{{.response}}`; never returned by the API). */
  response: string;
  duration_ms: number;
}

const PEM = /-----BEGIN [A-Z0-9 ]+-----/;
/** A TLS file larger than this is refused: PEM certificates and keys are a few KiB. */
export const MAX_TLS_FILE_BYTES = 64 * 1024;

/** Why a TLS file cannot be used; its message is the 422's. */
class TlsFileError extends Error {}

/** Contents of the TLS files read, by real path, with the identity of the file they were read from. */
const tlsFiles = new Map<string, { ino: number; size: number; mtimeMs: number; text: string }>();

/**
 * Reads a TLS file named by a webhook of `namespace` (local runtime only), safely: the path,
 * symbolic links resolved, must be under the namespace's own folder of the allowed directory
 * (config `webhookTlsDir`, `<dir>/<namespace>/`: one namespace never names another's client
 * key); the file is opened once, without blocking (a FIFO would otherwise freeze the process) and
 * without following a link swapped in meanwhile, and checked on that open descriptor: a regular
 * file (not `/dev/zero`, a FIFO, a socket or a directory), at most {@link MAX_TLS_FILE_BYTES}, PEM
 * text. The text is kept per process and read again only when the file changes (inode, size or
 * mtime).
 */
export function readTlsFile(path: string, namespace: string | undefined): string {
  const dir = config().webhookTlsDir;
  if (!dir) throw new TlsFileError('TLS files are not allowed here (no MSG_WEBHOOK_TLS_DIR); give PEM text');
  // A namespace name is one folder name: never `..`, `.`, empty or with a separator.
  if (!namespace || namespace === '.' || namespace === '..' || /[/\\\0]/.test(namespace)) throw new TlsFileError('TLS files are read per namespace; give PEM text');
  let root: string;
  let real: string;
  try {
    root = realpathSync(resolvePath(dir, namespace));
  } catch {
    throw new TlsFileError(`the namespace's TLS directory ${resolvePath(dir, namespace)} (MSG_WEBHOOK_TLS_DIR/<namespace>) does not exist; create it and put the PEM files there`);
  }
  try {
    real = realpathSync(isAbsolute(path) ? path : resolvePath(root, path));
  } catch {
    throw new TlsFileError(`file ${path} cannot be read; TLS files go under ${root}`);
  }
  if (!real.startsWith(root + sep)) throw new TlsFileError(`file ${path} is outside ${root} (MSG_WEBHOOK_TLS_DIR/<namespace>); put TLS files there or give PEM text`);
  const known = tlsFiles.get(real);
  if (known) {
    const st = statSync(real);
    if (st.ino === known.ino && st.size === known.size && st.mtimeMs === known.mtimeMs) return known.text;
  }
  let fd: number;
  try {
    fd = openSync(real, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK | fsConstants.O_NOFOLLOW);
  } catch {
    throw new TlsFileError(`file ${path} cannot be opened`);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new TlsFileError(`${path} is not a regular file; give a PEM file or PEM text`);
    if (st.size > MAX_TLS_FILE_BYTES) throw new TlsFileError(`file ${path} is ${st.size} bytes; TLS files are at most ${MAX_TLS_FILE_BYTES} bytes (64 KiB)`);
    // One byte more than the limit tells a file that grew since fstat.
    const buf = Buffer.alloc(MAX_TLS_FILE_BYTES + 1);
    let n = 0;
    for (let got = -1; got !== 0 && n < buf.length; n += got) got = readSync(fd, buf, n, buf.length - n, n);
    if (n > MAX_TLS_FILE_BYTES) throw new TlsFileError(`file ${path} is larger than ${MAX_TLS_FILE_BYTES} bytes (64 KiB)`);
    const text = buf.subarray(0, n).toString('utf8');
    if (!PEM.test(text)) throw new TlsFileError(`file ${path} is not PEM (-----BEGIN ...)`);
    tlsFiles.set(real, { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs, text });
    return text;
  } finally {
    closeSync(fd);
  }
}

/**
 * TLS material as given: PEM text, or a file path where the operator allows it (the local
 * runtime, {@link readTlsFile}). In AWS a path is refused: reading the function's own files is not
 * a webhook's business.
 */
export function tlsMaterial(value: string, namespace: string | undefined): string {
  if (PEM.test(value)) return value;
  if (!config().webhookTlsFilePaths) throw new TlsFileError('must be PEM text (-----BEGIN ...)');
  return readTlsFile(value, namespace);
}

/** Why TLS options cannot be used (for a 422 at create), or undefined. */
export function tlsProblem(tls: TlsOptions | undefined, namespace: string): { field: string; message: string } | undefined {
  for (const field of ['ca_cert', 'client_cert', 'client_key'] as const) {
    const v = tls?.[field];
    if (v === undefined) continue;
    try {
      tlsMaterial(v, namespace);
    } catch (e) {
      const message = e instanceof TlsFileError ? e.message : `file ${v} cannot be read`;
      return { field: `tls.${field}`, message };
    }
  }
  return undefined;
}

const agents = new Map<string, HttpAgent>();
const MAX_AGENTS = 200;
/**
 * How long an idle pooled connection is kept. A receiver that announces a shorter
 * `Keep-Alive: timeout=` is honoured by the agent (it closes a second before the receiver would).
 */
const IDLE_SOCKET_MS = 10_000;

/**
 * One agent (connection pool) per scheme and TLS setting, so keep-alive connections are reused
 * across deliveries of a container, and a connection opened with one webhook's client
 * certificate or CA never carries another webhook's request.
 */
function agentFor(protocol: string, tls: TlsOptions | undefined, port: number, namespace: string | undefined): HttpAgent {
  const https = protocol === 'https:';
  // With runtime endpoints to refuse (the local runtime), the lookup checks the port too, so each
  // port has its own agent; elsewhere (AWS) agents are per scheme and TLS setting only.
  const ownEndpoints = config().runtimeEndpoints.length > 0;
  const guarded = !config().allowPrivateWebhookTargets || ownEndpoints;
  // The namespace too: the same file name reads another file in each namespace's folder.
  const key = JSON.stringify([https, guarded, https ? (tls ?? null) : null, https && tls ? (namespace ?? null) : null, ownEndpoints ? port : null]);
  let agent = agents.get(key);
  if (!agent) {
    if (agents.size >= MAX_AGENTS) {
      const [oldKey, old] = agents.entries().next().value as [string, HttpAgent];
      agents.delete(oldKey);
      old.destroy();
    }
    const common = {
      keepAlive: true,
      timeout: IDLE_SOCKET_MS,
      // Every new connection resolves and checks its addresses, and connects to a checked one
      // (DNS rebinding). IP literals skip lookups: sendRequest checks those itself.
      ...(guarded ? { lookup: guardedLookupFor(ownEndpoints ? port : undefined) } : {}),
    };
    agent = https
      ? new HttpsAgent({
          ...common,
          rejectUnauthorized: tls?.verify_ssl !== false,
          ...(tls?.ca_cert ? { ca: tlsMaterial(tls.ca_cert, namespace) } : {}),
          ...(tls?.client_cert ? { cert: tlsMaterial(tls.client_cert, namespace) } : {}),
          ...(tls?.client_key ? { key: tlsMaterial(tls.client_key, namespace) } : {}),
        })
      : new HttpAgent(common);
    agents.set(key, agent);
  }
  return agent;
}

/** Closes every pooled connection (end of a test or of the local runtime). */
export async function closeAgents() {
  const all = [...agents.values()];
  agents.clear();
  for (const a of all) a.destroy();
}

function errorCodes(e: unknown): string[] {
  const out: string[] = [];
  const seen = new Set<unknown>();
  const walk = (x: unknown) => {
    if (!x || typeof x !== 'object' || seen.has(x)) return;
    seen.add(x);
    const err = x as { code?: string; name?: string; cause?: unknown; errors?: unknown[] };
    if (err.code) out.push(err.code);
    if (err.name) out.push(err.name);
    walk(err.cause);
    for (const inner of err.errors ?? []) walk(inner);
  };
  walk(e);
  return out;
}

function ownEndpointRefusal(e: unknown): boolean {
  for (let x: unknown = e; x && typeof x === 'object'; x = (x as { cause?: unknown }).cause) {
    if (x instanceof TargetRefusedError) return x.cls === OWN_ENDPOINT;
  }
  return false;
}

/** A one-line reason for a request that got no answer. */
function describeFailure(e: unknown, timeoutSeconds: number, timedOut: boolean): string {
  const codes = errorCodes(e);
  if (timedOut || codes.some((c) => /TIMEOUT|AbortError/i.test(c))) return `timeout after ${timeoutSeconds} s`;
  if (codes.includes(TARGET_REFUSED)) return ownEndpointRefusal(e) ? `target address not allowed (${OWN_ENDPOINT})` : 'target address not allowed (not a public address)';
  if (codes.includes('ECONNREFUSED')) return 'connection refused';
  if (codes.includes('ENOTFOUND') || codes.includes('EAI_AGAIN')) return 'host not found';
  // OpenSSL's verify results (UNABLE_TO_VERIFY_LEAF_SIGNATURE, CERT_HAS_EXPIRED, ...) and Node's TLS errors.
  const tls = codes.find((c) => /CERT|SSL|TLS|SELF_SIGNED|ERR_OSSL|VERIFY|ISSUER/.test(c));
  if (tls) return `TLS error: ${tls}`;
  if (codes.includes('ECONNRESET') || codes.includes('EPIPE')) return 'connection reset';
  return `connection failed${codes[0] ? `: ${codes[0]}` : ''}`;
}

/**
 * Reads at most {@link MAX_RESPONSE_BYTES} of the body, then drops the rest: a receiver cannot
 * make a delivery hold more than that in memory, nor keep it reading (the timeout still applies).
 */
async function readCapped(body: IncomingMessage, keepOnError: boolean): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    // Leaving the loop early destroys the stream (and its connection, which is then not reused).
    for await (const chunk of body as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      size += chunk.length;
      if (size > MAX_RESPONSE_BYTES) break;
    }
  } catch (e) {
    // The status line said 2xx: the receiver has the message. A body that then trickles past the
    // timeout (or is cut) does not undo that; counted a timeout, it would be POSTed again.
    if (!keepOnError) throw e;
  }
  return cutResponse(Buffer.concat(chunks).toString('utf8'));
}

/** One request and its (capped) answer; rejects on network trouble and on the signal. */
function exchange(req: OutgoingRequest, signal: AbortSignal): Promise<{ status: number; response: string }> {
  const url = new URL(req.url);
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    // Set once a 2xx status line arrived: from then on, the body's read settles the exchange.
    let answered = false;
    const outgoing = send(
      url,
      {
        method: req.method,
        headers: { ...req.headers, 'content-length': String(req.body.length) },
        agent: agentFor(url.protocol, req.tls, portOf(url), req.namespace),
        signal,
      },
      (res) => {
        // A late error (the signal, a reset after the cap) must not become an unhandled 'error' event.
        res.on('error', () => {});
        const status = res.statusCode ?? 0;
        answered = status >= 200 && status < 300;
        readCapped(res, answered).then((response) => resolve({ status, response }), reject);
      },
    );
    outgoing.on('error', (e) => {
      if (!answered) reject(e);
    });
    outgoing.end(req.body);
  });
}

/** Sends the request once and reports the outcome; never throws for network trouble. */
export async function sendRequest(req: OutgoingRequest): Promise<DeliveryResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const url = new URL(req.url);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  // IP literals never go through a lookup, so they are checked here.
  const literal = classifyAddress(host);
  if (literal) {
    try {
      await resolveChecked(host, portOf(url));
    } catch (e) {
      return { ok: false, status_code: null, error: describeFailure(e, req.timeoutSeconds, false), response: '', duration_ms: 0 };
    }
  }
  const signal = AbortSignal.timeout(req.timeoutSeconds * 1000);
  try {
    const { status, response } = await exchange(req, signal);
    if (status >= 200 && status < 300) return { ok: true, status_code: status, error: null, response, duration_ms: elapsed() };
    const error = status >= 300 && status < 400 ? 'redirect refused' : `HTTP ${status}`;
    return { ok: false, status_code: status, error, response, duration_ms: elapsed() };
  } catch (e) {
    return { ok: false, status_code: null, error: describeFailure(e, req.timeoutSeconds, signal.aborted), response: '', duration_ms: elapsed() };
  }
}
