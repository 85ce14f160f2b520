/**
 * Webhook configuration (SPEC.md "Webhook configuration", DESIGN.md sections 9 and 13): the
 * request schema with the settled ranges and defaults, the `max_retries` alias, header and TLS
 * rules, and the PATCH merge. Pure: the SSRF check on resolved addresses happens in the
 * operations (it needs DNS).
 */
import { OPERATORS, type Condition } from './conditions';
import { secretProblem } from './signatures';
import { webhookUrlProblem } from './ssrf';
import { topicFilterField, topicNameField } from '../../queues/rules/queues';
import { ApiError, validationError } from '../../core/rules/errors';
import type { Scope } from '../../core/rules/routes';
import { intIn, parse, resourceName } from '../../core/rules/validation';
import { DELIVERY_PLACEHOLDERS, leastRenderedBytes, MAX_RENDERED_HEADERS_BYTES } from './templates';
import * as z from 'zod/mini';
import { effectiveHealth, LIMIT_BOUNDS, type HealthField, type NamespaceHealthDefaults } from './endpoint-health';

export const WEBHOOK_DEFAULTS = {
  method: 'POST',
  enabled: true,
  timeout: 10,
  retry_count: 3,
  retry_delay: 1,
  backoff_multiplier: 2,
  max_retry_delay: 300,
  max_payload_size: 262144,
} as const;

export const WEBHOOK_METHODS = ['POST', 'PUT', 'PATCH'] as const;
const MAX_HEADERS = 50;
const MAX_HEADER_VALUE_CHARS = 8192;
/** A body template above this size would be a payload of its own, not a template. */
const MAX_BODY_TEMPLATE_BYTES = 64 * 1024;
const MAX_HOOK_PAYLOAD_CHARS = 64 * 1024;
/** URLs longer than this are refused (422); browsers and proxies commonly stop at about 2 KB. */
const MAX_URL_CHARS = 2048;
/**
 * The whole stored configuration (its JSON, UTF-8, with the secret) is at most this large, so the
 * webhook's item always fits DynamoDB's 400 KB: each field has its own limit, but 50 headers of
 * 8 KB, a 64 KiB body template, two 64 KiB hook payloads and three 64 KiB PEM texts together would
 * not fit. Above it: 413 MESSAGE_TOO_LARGE, nothing stored.
 */
const MAX_CONFIG_BYTES = 128 * 1024;
import { MAX_MAX_RETRY_DELAY, MAX_RETRY_COUNT } from './retry-limits';
export { MAX_MAX_RETRY_DELAY, MAX_RETRY_COUNT };

/** RFC 9110 token: the characters a header field name may have. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/**
 * Headers the service sets itself: framing headers (a wrong Content-Length or Transfer-Encoding
 * would desynchronise the connection) and the Standard Webhooks headers the receiver verifies.
 */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'content-encoding', 'webhook-id', 'webhook-timestamp', 'webhook-signature']);

const urlField = () =>
  z.string().check(
    z.maxLength(MAX_URL_CHARS),
    z.superRefine((u, ctx) => {
      const why = webhookUrlProblem(u);
      if (why) ctx.addIssue({ code: 'custom', message: why });
    }),
  );

const headersField = () =>
  z.record(z.string(), z.string()).check(
    z.superRefine((h, ctx) => {
      const names = Object.keys(h);
      if (names.length > MAX_HEADERS) ctx.addIssue({ code: 'custom', message: `at most ${MAX_HEADERS} headers` });
      const seen = new Set<string>();
      for (const [name, value] of Object.entries(h)) {
        const lower = name.toLowerCase();
        if (!HEADER_NAME.test(name)) ctx.addIssue({ code: 'custom', path: [name], message: 'header names are RFC 9110 tokens (no spaces, colons, CR or LF)' });
        else if (RESERVED_HEADERS.has(lower)) ctx.addIssue({ code: 'custom', path: [name], message: 'is set by the service and cannot be configured' });
        else if (seen.has(lower)) ctx.addIssue({ code: 'custom', path: [name], message: 'is given twice (header names are case-insensitive)' });
        seen.add(lower);
        // CR or LF would start a new header line on the wire (DESIGN.md section 13).
        // eslint-disable-next-line no-control-regex
        if (/[\r\n\x00]/.test(value)) ctx.addIssue({ code: 'custom', path: [name], message: 'header values must not contain CR, LF or NUL' });
        if (value.length > MAX_HEADER_VALUE_CHARS) ctx.addIssue({ code: 'custom', path: [name], message: `at most ${MAX_HEADER_VALUE_CHARS} characters` });
      }
      // What can never fit the rendered budget is refused now; what depends on the message's
      // size fails that delivery alone (../domain/delivery.ts buildRequest).
      const least = Object.entries(h).reduce((n, [name, value]) => n + Buffer.byteLength(name, 'utf8') + leastRenderedBytes(value, DELIVERY_PLACEHOLDERS), 0);
      if (least > MAX_RENDERED_HEADERS_BYTES) {
        ctx.addIssue({ code: 'custom', message: `names and values render to at least ${least} bytes; at most ${MAX_RENDERED_HEADERS_BYTES} bytes once rendered` });
      }
    }),
  );

const bodyTemplateField = () =>
  z.record(z.string(), z.unknown()).check(
    z.superRefine((t, ctx) => {
      if (Buffer.byteLength(JSON.stringify(t)) > MAX_BODY_TEMPLATE_BYTES) ctx.addIssue({ code: 'custom', message: `at most ${MAX_BODY_TEMPLATE_BYTES} bytes of JSON` });
    }),
  );

const hookField = () => z.object({ topic: topicNameField(), payload: z.string().check(z.maxLength(MAX_HOOK_PAYLOAD_CHARS)) });

const conditionField = () =>
  z.object({
    field: z.string().check(z.minLength(1), z.maxLength(256)),
    operator: z.string().check(z.refine((o) => (OPERATORS as readonly string[]).includes(o), `must be one of ${OPERATORS.join(' ')}`)),
    value: z.union([z.number(), z.string().check(z.maxLength(1024))]),
  });

/** PEM text, or (where the operator allows it: the local runtime) a file path. */
const tlsMaterial = () => z.string().check(z.minLength(1), z.maxLength(65536));

const tlsField = () =>
  z.object({
    verify_ssl: z.optional(z.boolean()),
    ca_cert: z.optional(tlsMaterial()),
    client_cert: z.optional(tlsMaterial()),
    client_key: z.optional(tlsMaterial()),
  });

const secretField = () =>
  z.string().check(
    z.superRefine((s, ctx) => {
      const why = secretProblem(s);
      if (why) ctx.addIssue({ code: 'custom', message: why });
    }),
  );

/** An HTTP method of deliveries, case-insensitive. */
const methodField = () => z._default(z.pipe(z.pipe(z.string(), z.transform((m) => m.toUpperCase())), z.enum(WEBHOOK_METHODS)), WEBHOOK_DEFAULTS.method);

/** Every configurable field; `name` and `url` and `topic_filter` required (create and PUT). */
export const webhookSchema = z
  .object({
    name: resourceName(),
    url: urlField(),
    topic_filter: topicFilterField(),
    method: methodField(),
    enabled: z._default(z.boolean(), WEBHOOK_DEFAULTS.enabled),
    headers: z.optional(headersField()),
    body_template: z.optional(bodyTemplateField()),
    timeout: z._default(intIn(1, 30), WEBHOOK_DEFAULTS.timeout),
    retry_count: z.optional(intIn(0, MAX_RETRY_COUNT)),
    max_retries: z.optional(intIn(0, MAX_RETRY_COUNT)),
    retry_delay: z._default(intIn(0, 3600), WEBHOOK_DEFAULTS.retry_delay),
    max_retry_delay: z._default(intIn(0, MAX_MAX_RETRY_DELAY), WEBHOOK_DEFAULTS.max_retry_delay),
    backoff_multiplier: z._default(z.number().check(z.minimum(1), z.maximum(10)), WEBHOOK_DEFAULTS.backoff_multiplier),
    dead_letter_topic: z.optional(topicNameField()),
    on_failure: z.optional(z.union([z.literal('send_to_dlq'), hookField()])),
    on_success: z.optional(hookField()),
    condition: z.optional(conditionField()),
    tls: z.optional(tlsField()),
    max_payload_size: z._default(intIn(1, 1048576), WEBHOOK_DEFAULTS.max_payload_size),
    compression: z.optional(z.enum(['gzip'])),
    debug: z._default(z.boolean(), false),
    log_requests: z._default(z.boolean(), false),
    log_responses: z._default(z.boolean(), false),
    secret: z.optional(secretField()),
    // Delivery limits and endpoint health (lambda/webhooks/rules/endpoint-health.ts).
    rate_limit: z.optional(intIn(...LIMIT_BOUNDS.rate_limit)),
    max_in_flight: z.optional(intIn(...LIMIT_BOUNDS.max_in_flight)),
    failure_threshold: z.optional(intIn(...LIMIT_BOUNDS.failure_threshold)),
    disable_after: z.optional(intIn(...LIMIT_BOUNDS.disable_after)),
    // The application (lambda/applications/rules.ts) the webhook belongs to: its uid.
    application: z.optional(resourceName()),
  })
  .check(z.superRefine((w, ctx) => {
    if (w.retry_count !== undefined && w.max_retries !== undefined && w.retry_count !== w.max_retries) {
      ctx.addIssue({ code: 'custom', path: ['max_retries'], message: 'is an alias of retry_count; give one of them, or the same value' });
    }
    if (w.on_failure === 'send_to_dlq' && !w.dead_letter_topic) {
      ctx.addIssue({ code: 'custom', path: ['dead_letter_topic'], message: 'is required when on_failure is send_to_dlq' });
    }
    const pair = tlsPairProblem(w.tls);
    if (pair) ctx.addIssue({ code: 'custom', ...pair });
  }));

type WebhookInput = z.output<typeof webhookSchema>;

/** A client certificate needs its key and a key its certificate. */
function tlsPairProblem(tls: { client_cert?: string; client_key?: string } | undefined) {
  if (!tls || (tls.client_cert === undefined) === (tls.client_key === undefined)) return undefined;
  return { path: ['tls', tls.client_cert === undefined ? 'client_cert' : 'client_key'], message: 'client_cert and client_key go together' };
}

/**
 * `POST /webhooks/test` (SPEC.md "Webhooks"): name, url, topic_filter, method, and the `tls`
 * options of a webhook, which the test honours like a delivery.
 */
export const webhookTestSchema = z
  .object({
    name: resourceName(),
    url: urlField(),
    topic_filter: topicFilterField(),
    method: methodField(),
    tls: z.optional(tlsField()),
  })
  .check(z.superRefine((t, ctx) => {
    const pair = tlsPairProblem(t.tls);
    if (pair) ctx.addIssue({ code: 'custom', ...pair });
  }));

/** The stored configuration: the input with the alias folded into `retry_count`. */
export interface WebhookConfig {
  url: string;
  topic_filter: string;
  method: (typeof WEBHOOK_METHODS)[number];
  enabled: boolean;
  headers?: Record<string, string>;
  body_template?: Record<string, unknown>;
  timeout: number;
  retry_count: number;
  retry_delay: number;
  max_retry_delay: number;
  backoff_multiplier: number;
  dead_letter_topic?: string;
  on_failure?: 'send_to_dlq' | { topic: string; payload: string };
  on_success?: { topic: string; payload: string };
  condition?: Condition;
  tls?: { verify_ssl?: boolean; ca_cert?: string; client_cert?: string; client_key?: string };
  max_payload_size: number;
  compression?: 'gzip';
  debug: boolean;
  log_requests: boolean;
  log_responses: boolean;
  /** Deliveries per second at most (first attempts and retries together); none when absent. */
  rate_limit?: number;
  /** Requests to the endpoint at once at most; none when absent. */
  max_in_flight?: number;
  /** Consecutive deliveries ending in failure before health disables the webhook (else the namespace's default, else HEALTH_DEFAULTS). */
  failure_threshold?: number;
  /** Seconds of continuous failure before health disables the webhook (else the namespace's default, else HEALTH_DEFAULTS). */
  disable_after?: number;
  /** The uid of the application the webhook belongs to; none when absent. */
  application?: string;
}

/** Fields a client may set, in the order GET shows them. */
export const CONFIG_FIELDS = [
  'url', 'topic_filter', 'method', 'enabled', 'headers', 'body_template', 'timeout', 'retry_count', 'retry_delay', 'max_retry_delay',
  'backoff_multiplier', 'dead_letter_topic', 'on_failure', 'on_success', 'condition', 'tls', 'max_payload_size', 'compression', 'debug',
  'log_requests', 'log_responses', 'rate_limit', 'max_in_flight', 'failure_threshold', 'disable_after', 'application',
] as const satisfies readonly (keyof WebhookConfig)[];

/** Splits a parsed input into the stored configuration and the optional given secret. */
function toConfig(w: WebhookInput): { name: string; config: WebhookConfig; secret?: string } {
  const { name, secret, max_retries, retry_count, ...rest } = w;
  const config = { ...rest, retry_count: retry_count ?? max_retries ?? WEBHOOK_DEFAULTS.retry_count } as WebhookConfig;
  for (const k of Object.keys(config) as (keyof WebhookConfig)[]) if (config[k] === undefined) delete config[k];
  return { name, config, ...(secret !== undefined ? { secret } : {}) };
}

/**
 * Parses a create or PUT body. `pathName` (PUT) must equal `name` when the body gives one;
 * `stored` (PUT, PATCH) is the configuration it replaces ({@link withStoredClientKey}).
 * @example parseWebhook({ name: 'w', url: 'https://x.example/h', topic_filter: 'a/#' }).config.retry_count // 3
 */
export function parseWebhook(body: unknown, pathName?: string, stored?: WebhookConfig) {
  const named = pathName !== undefined && isObject(body) && body.name === undefined ? { ...body, name: pathName } : body;
  const input = withStoredClientKey(named, stored);
  const parsed = toConfig(parse(webhookSchema, input));
  assertConfigSize(parsed);
  if (pathName !== undefined && parsed.name !== pathName) {
    throw validationError([{ field: 'name', message: 'must match the webhook name in the path (webhooks cannot be renamed)' }]);
  }
  return parsed;
}

/** Throws 413 when the configuration (with its secret) would not fit {@link MAX_CONFIG_BYTES}. */
function assertConfigSize(c: { config: WebhookConfig; secret?: string }) {
  const size = Buffer.byteLength(JSON.stringify(c), 'utf8');
  if (size > MAX_CONFIG_BYTES) {
    throw new ApiError(413, 'MESSAGE_TOO_LARGE', `The webhook configuration is ${size} bytes as JSON; the limit is ${MAX_CONFIG_BYTES} bytes (128 KiB) for headers, templates, TLS material and hooks together.`, {
      field: 'body',
      size,
      limit: MAX_CONFIG_BYTES,
    });
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Parses a PATCH body: the given fields over the stored configuration (top-level merge; a field
 * given as null returns to its default or is removed), validated like a create.
 * @example parseWebhookPatch('w', stored, { retry_delay: 4 }).config.retry_delay // 4
 */
export function parseWebhookPatch(name: string, stored: WebhookConfig, body: unknown) {
  // Type errors of the body itself (not an object) are reported by parse below.
  if (!isObject(body)) return parseWebhook(body, name);
  const merged: Record<string, unknown> = { ...stored, name };
  if (body.max_retries !== undefined && body.retry_count === undefined) delete merged.retry_count;
  for (const [k, v] of Object.entries(body)) {
    if (v === null) delete merged[k];
    else merged[k] = v;
  }
  return parseWebhook(merged, name, stored);
}

/**
 * The scopes a create, PUT or PATCH needs beside `manage`, from the configuration it would leave
 * (docs/security.md "What each scope allows"): an enabled webhook sends every payload its filter
 * matches to its URL, which is reading them, so `consume`; hooks (`on_success`, `on_failure`,
 * `send_to_dlq`) publish on the key's behalf, so `publish`, as schedules and redrive do. A
 * disabled webhook without hooks delivers and publishes nothing: `manage` alone may create and
 * change it, and a key with `consume` is needed to enable it.
 * @example webhookScopes({ enabled: false }) // []
 * @example webhookScopes({ enabled: true, on_success: { topic: 't', payload: 'p' } }) // ['consume', 'publish']
 */
export function webhookScopes(c: Pick<WebhookConfig, 'enabled' | 'on_success' | 'on_failure'>): Scope[] {
  return [...(c.enabled ? (['consume'] as const) : []), ...(c.on_success || c.on_failure ? (['publish'] as const) : [])];
}

/**
 * The scopes a replay of the webhook's deliveries needs beside `manage` and `consume`: a replayed
 * delivery ends like any other, so its `on_success` or `on_failure` hook (`send_to_dlq` included)
 * publishes on the replaying key's behalf, which needs `publish` (docs/security.md).
 * @example replayScopes({ on_failure: 'send_to_dlq' }) // ['publish']
 */
export const replayScopes = (c: Pick<WebhookConfig, 'on_success' | 'on_failure'>): Scope[] => (c.on_success || c.on_failure ? ['publish'] : []);

/** What a read shows in place of a value it must not reveal. */
export const REDACTED = '[redacted]';

/**
 * The configuration as the API shows it; unset optional fields are null. Never the signing
 * secret nor `tls.client_key`. Keys without the `manage` scope (`manage: false`) see only the
 * filter, `enabled` and the URL's origin (DESIGN.md section 2): templates, headers, hooks'
 * payloads, conditions and TLS material often carry tokens, and so do a URL's path and query.
 * @example configView(c, { manage: false }) // { url: 'https://h.example', topic_filter: 'a/#', enabled: true }
 * @example configView({ ...c, url: 'https://h.example/hook?token=s' }, { manage: false }).url // 'https://h.example'
 */
export function configView(c: WebhookConfig, opts: { manage: boolean; healthDefaults?: NamespaceHealthDefaults }) {
  if (!opts.manage) return { url: urlOrigin(c.url), topic_filter: c.topic_filter, enabled: c.enabled };
  const out: Record<string, unknown> = {};
  const health = effectiveHealth(c, opts.healthDefaults);
  for (const k of CONFIG_FIELDS) out[k] = k in health ? health[k as HealthField].value : (c[k] ?? (k === 'headers' ? {} : null));
  if (c.tls) {
    const { client_key: _never, ...tls } = c.tls;
    out.tls = tls;
  }
  return out;
}

/**
 * A webhook URL as keys without `manage` see it: scheme and host (with a port that is not the
 * scheme's default), without path, query or fragment.
 * @example urlOrigin('https://hooks.example:8443/in/abc?token=s') // 'https://hooks.example:8443'
 */
export function urlOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return REDACTED;
  }
}

/**
 * A PUT or PATCH body with the stored `tls.client_key` filled in when the body gives the stored
 * `client_cert` again without a key: reads never return the key, so a client that writes back
 * what it read keeps its client certificate working (as PUT keeps the stored secret). A body
 * with another certificate must bring its own key.
 */
function withStoredClientKey(body: unknown, stored: WebhookConfig | undefined): unknown {
  const key = stored?.tls?.client_key;
  if (!key || !isObject(body) || !isObject(body.tls)) return body;
  const tls = body.tls;
  if (tls.client_key !== undefined || tls.client_cert === undefined || tls.client_cert !== stored.tls?.client_cert) return body;
  return { ...body, tls: { ...tls, client_key: key } };
}
