/**
 * Environment, parsed once per container (cold start). Every setting the functions read is here.
 */
import { TABLES, type TableId } from './storage/tables';
import { MAX_LONG_POLL_SECONDS } from './rules/gateway-responses';
import { DEFAULT_ACCOUNT_CONCURRENCY, DEFAULT_POOL_SHARDS, longPollLimits, poolSlotShards, type LongPollLimits } from './rules/long-poll-limits';

const bool = (v: string | undefined, def: boolean) => (v === undefined || v === '' ? def : /^(1|true|yes)$/i.test(v));
const int = (v: string | undefined, def: number) => (v && /^\d+$/.test(v) ? Number(v) : def);

/**
 * Default share of one namespace where `MSG_WEBHOOK_NAMESPACE_SHARE` is not set (the stack always
 * sets it, namespaceShareFor in lambda/webhooks/storage/delivery-queue.ts: a quarter of the jobs
 * its batches hold): what the stack would set for the local runtime's delivery capacity, 16
 * batches of 10 (local/webhooks.ts), so a namespace with a backlog holds the same part of the
 * capacity locally as deployed (test/unit/local-namespace-share.test.ts).
 */
const DEFAULT_WEBHOOK_NAMESPACE_SHARE = 40;

export interface Config {
  region: string;
  /** Set locally (DynamoDB Local) and in integration tests; unset in AWS. */
  dynamodbEndpoint?: string;
  tableNames: Record<TableId, string>;
  /** Base domain of per-namespace hosts (`{ns}.{baseDomain}`), for the Host rule. */
  baseDomain?: string;
  /** `{namespace}` is replaced; when unset the endpoint is derived from the request's host. */
  endpointTemplate?: string;
  allowPrivateWebhookTargets: boolean;
  /** Upper bound of a long poll: the stack's, locally too (MAX_LONG_POLL_SECONDS, 25 s). */
  maxLongPollSeconds: number;
  /**
   * Waiting consumers at most, per namespace and in total (lambda/queues/bulkhead.ts): from
   * MSG_ACCOUNT_CONCURRENCY (the account's Lambda concurrency, 1,000 by default) unless
   * MSG_LONG_POLL_MAX_WAITING / MSG_LONG_POLL_MAX_WAITING_PER_NAMESPACE set them.
   */
  longPollLimits: LongPollLimits;
  /** Name of the pool the total counts in (MSG_LONG_POLL_POOL; tests use their own). @default 'ALL' */
  longPollPool: string;
  /** Items the pool's total is split over (MSG_LONG_POLL_POOL_SHARDS; lambda/queues/storage/long-poll-slots.ts). @default 64 */
  longPollPoolShards: number;
  /** SQS queue of webhook delivery jobs (set by the stack on the publish function). */
  webhookQueueUrl?: string;
  /** SQS queue of the tick's shard tasks (set by the stack on the scheduler function; lambda/schedules/storage/tick-tasks.ts). */
  tickTasksQueueUrl?: string;
  /** State machine that retries failed webhook deliveries (set on the delivery function). */
  webhookRetryStateMachineArn?: string;
  /**
   * Webhook deliveries one namespace may have in flight at once (its share of the delivery
   * function's capacity); jobs over it wait in the queue (lambda/webhooks/share.ts).
   */
  webhookNamespaceShare: number;
  /** Webhook TLS material may name files (local runtime only; in AWS only PEM text). */
  webhookTlsFilePaths: boolean;
  /**
   * The directory TLS files must be under (MSG_WEBHOOK_TLS_DIR; the local runtime's default is
   * `./tls`). Without it no path is accepted, even with `webhookTlsFilePaths`.
   */
  webhookTlsDir?: string;
  /**
   * The runtime's own endpoints (MSG_RUNTIME_ENDPOINTS, comma-separated URLs: the local gateway,
   * DynamoDB Local, fauxqs). Never a webhook target, whatever `allowPrivateWebhookTargets` says:
   * a webhook could otherwise write to the engines with a crafted body.
   */
  runtimeEndpoints: { host: string; port: number }[];
  /**
   * SQS endpoint of the service queues and the delivery queue: fauxqs locally, unset in AWS (the
   * SDK's regional endpoint). `AWS_ENDPOINT_URL_SQS`, the SDK's own setting, is honoured too.
   */
  sqsEndpoint?: string;
  /**
   * Name prefix of every SQS queue that backs a service queue of this deployment (the stack's
   * IAM grants cover `arn:aws:sqs:<region>:<account>:<prefix>*` only).
   */
  sqsQueuePrefix: string;
  /**
   * Queue URLs are this base plus the queue's name (`https://sqs.<region>.amazonaws.com/<account>/`
   * in AWS, set by the stack): no GetQueueUrl round trip. Locally derived from the endpoint.
   */
  sqsQueueUrlBase: string;
  /** Name of the deployment (the stack's), tagged on every SQS queue it creates. */
  stackName: string;
  /** Secrets Manager secret holding the receipt-handle signing key (AWS). */
  receiptKeySecretArn?: string;
  /** The receipt-handle signing key itself (local runtime and tests; never set in AWS). */
  receiptKey?: string;
  /** KMS key that encrypts webhook secrets at rest (AWS; set by the stack). */
  secretsKmsKeyArn?: string;
  /** Hex 256-bit key that stands in for KMS locally (lambda/core/adapters/data-keys.ts). */
  secretsLocalKey?: string;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const tableNames = Object.fromEntries(
    Object.values(TABLES).map((t) => [t.id, env[t.envVar] || t.localName]),
  ) as Record<TableId, string>;
  const region = env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1';
  const sqsEndpoint = env.MSG_SQS_ENDPOINT || env.AWS_ENDPOINT_URL_SQS || undefined;
  const waiting = longPollLimits(Math.max(1, int(env.MSG_ACCOUNT_CONCURRENCY, DEFAULT_ACCOUNT_CONCURRENCY)), {
    ...(env.MSG_LONG_POLL_MAX_WAITING ? { total: Math.max(1, int(env.MSG_LONG_POLL_MAX_WAITING, 1)) } : {}),
    ...(env.MSG_LONG_POLL_MAX_WAITING_PER_NAMESPACE ? { perNamespace: Math.max(1, int(env.MSG_LONG_POLL_MAX_WAITING_PER_NAMESPACE, 1)) } : {}),
  });
  return {
    region,
    dynamodbEndpoint: env.MSG_DYNAMODB_ENDPOINT || undefined,
    tableNames,
    baseDomain: env.MSG_BASE_DOMAIN || undefined,
    endpointTemplate: env.MSG_ENDPOINT_TEMPLATE || undefined,
    allowPrivateWebhookTargets: bool(env.MSG_ALLOW_PRIVATE_WEBHOOK_TARGETS, false),
    maxLongPollSeconds: int(env.MSG_MAX_LONG_POLL_SECONDS, MAX_LONG_POLL_SECONDS),
    longPollPool: env.MSG_LONG_POLL_POOL || 'ALL',
    // More shards than asked when the total would put more than 64 slots in one (a write unit's KB).
    longPollPoolShards: poolSlotShards(waiting.total, Math.max(1, int(env.MSG_LONG_POLL_POOL_SHARDS, DEFAULT_POOL_SHARDS))),
    longPollLimits: waiting,
    webhookQueueUrl: env.MSG_WEBHOOK_QUEUE_URL || undefined,
    tickTasksQueueUrl: env.MSG_TICK_TASKS_QUEUE_URL || undefined,
    webhookRetryStateMachineArn: env.MSG_WEBHOOK_RETRY_STATE_MACHINE_ARN || undefined,
    webhookNamespaceShare: Math.max(1, int(env.MSG_WEBHOOK_NAMESPACE_SHARE, DEFAULT_WEBHOOK_NAMESPACE_SHARE)),
    webhookTlsFilePaths: bool(env.MSG_WEBHOOK_TLS_FILE_PATHS, false),
    webhookTlsDir: env.MSG_WEBHOOK_TLS_DIR || undefined,
    runtimeEndpoints: parseEndpoints(env.MSG_RUNTIME_ENDPOINTS),
    sqsEndpoint,
    sqsQueuePrefix: env.MSG_SQS_QUEUE_PREFIX || 'msg_',
    sqsQueueUrlBase: env.MSG_SQS_QUEUE_URL_BASE || localQueueUrlBase(sqsEndpoint, region),
    stackName: env.MSG_STACK_NAME || 'local',
    receiptKeySecretArn: env.MSG_RECEIPT_KEY_SECRET_ARN || undefined,
    receiptKey: env.MSG_RECEIPT_KEY || undefined,
    secretsKmsKeyArn: env.MSG_SECRETS_KMS_KEY_ARN || undefined,
    secretsLocalKey: env.MSG_SECRETS_LOCAL_KEY || undefined,
  };
}

/** `http://127.0.0.1:8000,http://localhost:9324` → hosts and ports (default ports by scheme). */
function parseEndpoints(v: string | undefined): { host: string; port: number }[] {
  const out: { host: string; port: number }[] = [];
  for (const part of (v ?? '').split(',').map((p) => p.trim()).filter(Boolean)) {
    try {
      const u = new URL(part);
      out.push({ host: u.hostname.replace(/^\[(.*)\]$/, '$1'), port: Number(u.port || (u.protocol === 'https:' ? 443 : 80)) });
    } catch {
      throw new Error(`MSG_RUNTIME_ENDPOINTS: ${part} is not a URL; give the runtime's endpoints as comma-separated URLs like http://127.0.0.1:8000`);
    }
  }
  return out;
}

/**
 * An SQS-compatible endpoint (fauxqs, ElasticMQ) finds a queue by the last segment of its URL
 * whatever the host, so `<endpoint>/000000000000/<name>` works there; without an endpoint, the
 * regional AWS form (the account is then unknown: the stack always sets MSG_SQS_QUEUE_URL_BASE).
 */
function localQueueUrlBase(endpoint: string | undefined, region: string): string {
  return endpoint ? `${endpoint.replace(/\/+$/, '')}/000000000000/` : `https://sqs.${region}.amazonaws.com/000000000000/`;
}

let cached: Config | undefined;
/** The configuration of this container; `resetConfig()` lets tests change the environment. */
export const config = (): Config => (cached ??= loadConfig());
export const resetConfig = () => {
  cached = undefined;
};
