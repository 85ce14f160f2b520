/**
 * Environment, parsed once per container (cold start). Every setting the functions read is here.
 */
import { TABLES, type TableId } from './storage/tables';

const bool = (v: string | undefined, def: boolean) => (v === undefined || v === '' ? def : /^(1|true|yes)$/i.test(v));
const int = (v: string | undefined, def: number) => (v && /^\d+$/.test(v) ? Number(v) : def);

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
  /** Upper bound of a long poll; API Gateway's integration timeout caps it in AWS. */
  maxLongPollSeconds: number;
  /** SQS queue of webhook delivery jobs (set by the stack on the publish function). */
  webhookQueueUrl?: string;
  /** State machine that retries failed webhook deliveries (set on the delivery function). */
  webhookRetryStateMachineArn?: string;
  /** Webhook TLS material may name files (local runtime only; in AWS only PEM text). */
  webhookTlsFilePaths: boolean;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const tableNames = Object.fromEntries(
    Object.values(TABLES).map((t) => [t.id, env[t.envVar] || t.localName]),
  ) as Record<TableId, string>;
  return {
    region: env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1',
    dynamodbEndpoint: env.MSG_DYNAMODB_ENDPOINT || undefined,
    tableNames,
    baseDomain: env.MSG_BASE_DOMAIN || undefined,
    endpointTemplate: env.MSG_ENDPOINT_TEMPLATE || undefined,
    allowPrivateWebhookTargets: bool(env.MSG_ALLOW_PRIVATE_WEBHOOK_TARGETS, false),
    maxLongPollSeconds: int(env.MSG_MAX_LONG_POLL_SECONDS, 30),
    webhookQueueUrl: env.MSG_WEBHOOK_QUEUE_URL || undefined,
    webhookRetryStateMachineArn: env.MSG_WEBHOOK_RETRY_STATE_MACHINE_ARN || undefined,
    webhookTlsFilePaths: bool(env.MSG_WEBHOOK_TLS_FILE_PATHS, false),
  };
}

let cached: Config | undefined;
/** The configuration of this container; `resetConfig()` lets tests change the environment. */
export const config = (): Config => (cached ??= loadConfig());
export const resetConfig = () => {
  cached = undefined;
};
