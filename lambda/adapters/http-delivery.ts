/**
 * Sends one webhook request with undici (DESIGN.md section 9): a hard timeout over the whole
 * exchange, redirects never followed (undici's `request` does not follow them; a 3xx is reported
 * as the failure "redirect refused"), 2xx is success, the response body read only up to the 4 KiB
 * that `{{.response}}` may use, TLS options (verify_ssl, CA, client certificate) on a per-setting
 * agent, and every connection made through the SSRF guard's lookup (./target-guard.ts).
 */
import { readFileSync } from 'node:fs';
import { Agent, request } from 'undici';
import { config } from '../config';
import { classifyAddress } from '../domain/ssrf';
import { cutResponse, MAX_RESPONSE_BYTES } from '../domain/templates';
import { guardedLookup, TARGET_REFUSED } from './target-guard';

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

/**
 * TLS material as given: PEM text, or a file path where the operator allows it (the local
 * runtime). In AWS a path is refused: reading the function's own files is not a webhook's business.
 */
export function tlsMaterial(value: string): string {
  if (PEM.test(value)) return value;
  if (!config().webhookTlsFilePaths) throw new Error('TLS material must be PEM text');
  return readFileSync(value, 'utf8');
}

/** Why TLS options cannot be used (for a 422 at create), or undefined. */
export function tlsProblem(tls: TlsOptions | undefined): { field: string; message: string } | undefined {
  for (const field of ['ca_cert', 'client_cert', 'client_key'] as const) {
    const v = tls?.[field];
    if (v === undefined) continue;
    try {
      tlsMaterial(v);
    } catch (e) {
      const message = (e as NodeJS.ErrnoException).code ? `file ${v} cannot be read` : 'must be PEM text (-----BEGIN ...)';
      return { field: `tls.${field}`, message };
    }
  }
  return undefined;
}

const agents = new Map<string, Agent>();
const MAX_AGENTS = 200;

/** One agent (connection pool) per TLS setting, so keep-alive connections are reused across deliveries. */
function agentFor(tls: TlsOptions | undefined, timeoutMs: number): Agent {
  const key = JSON.stringify([tls ?? null, timeoutMs]);
  let agent = agents.get(key);
  if (!agent) {
    if (agents.size >= MAX_AGENTS) {
      const [oldKey, old] = agents.entries().next().value as [string, Agent];
      agents.delete(oldKey);
      void old.close();
    }
    agent = new Agent({
      keepAliveTimeout: 10_000,
      connect: {
        timeout: timeoutMs,
        // Every new connection resolves and checks its addresses (DNS rebinding).
        ...(config().allowPrivateWebhookTargets ? {} : { lookup: guardedLookup }),
        rejectUnauthorized: tls?.verify_ssl !== false,
        ...(tls?.ca_cert ? { ca: tlsMaterial(tls.ca_cert) } : {}),
        ...(tls?.client_cert ? { cert: tlsMaterial(tls.client_cert) } : {}),
        ...(tls?.client_key ? { key: tlsMaterial(tls.client_key) } : {}),
      },
    });
    agents.set(key, agent);
  }
  return agent;
}

/** Closes every pooled connection (end of a test or of the local runtime). */
export async function closeAgents() {
  const all = [...agents.values()];
  agents.clear();
  await Promise.all(all.map((a) => a.close()));
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

/** A one-line reason for a request that got no answer. */
export function describeFailure(e: unknown, timeoutSeconds: number, timedOut: boolean): string {
  const codes = errorCodes(e);
  if (timedOut || codes.some((c) => /TIMEOUT|AbortError/i.test(c))) return `timeout after ${timeoutSeconds} s`;
  if (codes.includes(TARGET_REFUSED)) return 'target address not allowed (not a public address)';
  if (codes.includes('ECONNREFUSED')) return 'connection refused';
  if (codes.includes('ENOTFOUND') || codes.includes('EAI_AGAIN')) return 'host not found';
  if (codes.includes('ECONNRESET') || codes.includes('UND_ERR_SOCKET')) return 'connection reset';
  const tls = codes.find((c) => /CERT|SSL|TLS|SELF_SIGNED|ERR_OSSL/.test(c));
  if (tls) return `TLS error: ${tls}`;
  return `connection failed${codes[0] ? `: ${codes[0]}` : ''}`;
}

/** Reads at most {@link MAX_RESPONSE_BYTES} of the body, then drops the rest. */
async function readCapped(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size > MAX_RESPONSE_BYTES) {
      body.destroy();
      break;
    }
  }
  return cutResponse(Buffer.concat(chunks).toString('utf8'));
}

/** Sends the request once and reports the outcome; never throws for network trouble. */
export async function sendRequest(req: OutgoingRequest): Promise<DeliveryResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const timeoutMs = req.timeoutSeconds * 1000;
  const host = new URL(req.url).hostname.replace(/^\[(.*)\]$/, '$1');
  // IP literals never go through a lookup, so they are checked here.
  const literal = classifyAddress(host);
  if (literal && literal !== 'public' && !config().allowPrivateWebhookTargets) {
    return { ok: false, status_code: null, error: 'target address not allowed (not a public address)', response: '', duration_ms: 0 };
  }
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  try {
    const res = await request(req.url, {
      method: req.method as 'POST',
      headers: req.headers,
      body: req.body,
      dispatcher: agentFor(req.tls, timeoutMs),
      signal: controller.signal,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    const response = await readCapped(res.body as unknown as AsyncIterable<Buffer> & { destroy(): void });
    const status = res.statusCode;
    if (status >= 200 && status < 300) return { ok: true, status_code: status, error: null, response, duration_ms: elapsed() };
    const error = status >= 300 && status < 400 ? 'redirect refused' : `HTTP ${status}`;
    return { ok: false, status_code: status, error, response, duration_ms: elapsed() };
  } catch (e) {
    return { ok: false, status_code: null, error: describeFailure(e, req.timeoutSeconds, timedOut), response: '', duration_ms: elapsed() };
  } finally {
    clearTimeout(timer);
  }
}
