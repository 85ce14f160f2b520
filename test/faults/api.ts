/**
 * The workload's HTTP client: every answer of the local gateway is checked against the envelope
 * rules of DESIGN.md section 3 as it arrives, and counted by status and code. A 5xx may only be
 * 500 INTERNAL_ERROR, or 503 SERVICE_UNAVAILABLE with a Retry-After of whole seconds.
 */
import { Agent, request, type IncomingHttpHeaders } from 'node:http';

export interface Answer<T = any> {
  status: number;
  headers: IncomingHttpHeaders;
  /** The parsed envelope; undefined when the body is not one (a violation is recorded). */
  body?: { success: boolean; data: T; error: { code: string; message: string; details: Record<string, unknown> } | null };
  code?: string;
}

/** What is wrong with an answer, or undefined when it is a proper envelope. */
function envelopeProblem(status: number, headers: IncomingHttpHeaders, text: string): string | undefined {
  let b: any;
  try {
    b = JSON.parse(text);
  } catch {
    return `${status} with a body that is not JSON: ${text.slice(0, 80)}`;
  }
  if (!b || typeof b !== 'object' || typeof b.success !== 'boolean' || !('data' in b) || !('error' in b)) return `${status} without the envelope: ${text.slice(0, 120)}`;
  if (b.success) return status >= 200 && status < 300 && b.error === null && b.data && typeof b.data === 'object' ? undefined : `${status} success envelope malformed`;
  const e = b.error;
  if (b.data !== null || !e || typeof e.code !== 'string' || typeof e.message !== 'string' || !e.details || typeof e.details !== 'object' || Array.isArray(e.details)) {
    return `${status} error envelope malformed: ${text.slice(0, 120)}`;
  }
  if (status < 400) return `${status} with success false`;
  if (status >= 500) {
    if (status === 500 && e.code === 'INTERNAL_ERROR') return undefined;
    const retryAfter = headers['retry-after'];
    if (status === 503 && e.code === 'SERVICE_UNAVAILABLE' && typeof retryAfter === 'string' && /^[1-9]\d*$/.test(retryAfter)) return undefined;
    return `${status} ${e.code} (retry-after ${String(retryAfter)}): only 500 INTERNAL_ERROR or 503 SERVICE_UNAVAILABLE with Retry-After`;
  }
  return undefined;
}

export class ApiClient {
  /** Answers by `status` or `status code`, e.g. `201`, `503 SERVICE_UNAVAILABLE`. */
  readonly answers = new Map<string, number>();
  readonly violations: string[] = [];
  /** Milliseconds per answer, by route (method and path with names replaced). */
  readonly latency = new Map<string, number[]>();
  private readonly agent: Agent;

  /**
   * `maxSockets`: requests in flight at once (the simulation's bursts send up to 300).
   * `keepAlive` false for clients that pause longer than the server's keep-alive timeout (5 s in
   * Node): a request sent on a kept socket the server is closing meets ECONNRESET, an artefact of
   * the client, not an answer of the service.
   */
  constructor(
    private readonly baseUrl: string,
    private readonly key: string,
    maxSockets = 64,
    keepAlive = true,
  ) {
    this.agent = new Agent({ keepAlive, maxSockets });
  }

  call<T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer<T>> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const started = Date.now();
    const route = `${method} ${path.replace(/^\/(topics)\/.*?\/messages/, '/$1/{topic}/messages').replace(/^\/(\w+)\/[^/]+/, '/$1/{name}').replace(/\/messages\/[^/]+\/ack$/, '/messages/{id}/ack')}`;
    const timed = (a: Answer<T>) => {
      const list = this.latency.get(route) ?? [];
      list.push(Date.now() - started);
      this.latency.set(route, list);
      return a;
    };
    return new Promise<Answer<T>>((resolve) => {
      const req = request(
        new URL(this.baseUrl + path),
        {
          method,
          agent: this.agent,
          headers: {
            authorization: `Bearer ${this.key}`,
            ...(payload !== undefined ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}),
            ...headers,
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const status = res.statusCode ?? 0;
            const text = Buffer.concat(chunks).toString('utf8');
            const problem = envelopeProblem(status, res.headers, text);
            if (problem) {
              this.violations.push(`${method} ${path.replace(/\/messages\/[^/]+\/ack$/, '/messages/{id}/ack')}: ${problem}`);
              this.count(`${status} (not an envelope)`);
              return resolve({ status, headers: res.headers });
            }
            const parsed = JSON.parse(text);
            const code = parsed.error?.code as string | undefined;
            this.count(code ? `${status} ${code}` : String(status));
            if (status >= 429) this.byRoute(`${status} ${route}${status === 429 ? ` (Retry-After ${String(res.headers['retry-after'])})` : ''}`);
            resolve({ status, headers: res.headers, body: parsed, code });
          });
        },
      );
      req.on('error', (e) => {
        this.violations.push(`${method} ${path}: no answer (${e.message})`);
        this.count('no answer');
        resolve({ status: 0, headers: {} });
      });
      if (payload !== undefined) req.write(payload);
      req.end();
    }).then(timed);
  }

  /** p50 and p95 of the answer times per route, in ms. */
  latencies(): Record<string, string> {
    const q = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
    return Object.fromEntries(
      [...this.latency].map(([route, ms]) => {
        const s = [...ms].sort((a, b) => a - b);
        return [route, `n ${s.length}, p50 ${q(s, 0.5)}, p95 ${q(s, 0.95)}`];
      }),
    );
  }

  /** 429 and 5xx answers by route (and, for 429, the Retry-After given). */
  readonly refusals = new Map<string, number>();

  private byRoute(k: string) {
    this.refusals.set(k, (this.refusals.get(k) ?? 0) + 1);
  }

  private count(k: string) {
    this.answers.set(k, (this.answers.get(k) ?? 0) + 1);
  }

  close() {
    this.agent.destroy();
  }
}

/** Whether a client should try the same request again: dependency trouble or a throttle. */
export const retryable = (a: Answer) => a.status === 0 || a.status >= 500 || a.status === 429 || (a.status === 409 && a.code === 'IDEMPOTENCY_KEY_IN_USE');

/**
 * How long a client waits before its next try: the Retry-After it was given, capped so the suite
 * stays short (a throttled rate-limit counter answers a Retry-After up to the window's end), else
 * a short exponential backoff with jitter.
 */
export function backoffMs(a: Answer, attempt: number, random: () => number): number {
  const ra = Number(a.headers['retry-after']);
  const base = Number.isFinite(ra) && ra > 0 ? Math.min(ra * 1000, 1000) : Math.min(1000, 50 * 2 ** attempt);
  return base / 2 + random() * (base / 2);
}
