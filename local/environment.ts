/**
 * The environment the local runtime gives the Lambda code: what the CDK stack sets on each
 * function in AWS, with local values. Settings already present in the environment win.
 */
import { resolve } from 'node:path';

export function localEnvironment({
  port,
  dynamodbEndpoint,
  sqsEndpoint,
  receiptKey,
  env,
}: {
  port: number;
  dynamodbEndpoint: string;
  /** Unset only for tools that never touch queues (bench/rate-limit.ts). */
  sqsEndpoint?: string;
  /** Signing key of receipt handles (kept with the local data, or new per run in memory). */
  receiptKey?: string;
  env: NodeJS.ProcessEnv;
}) {
  const defaults: Record<string, string> = {
    MSG_DYNAMODB_ENDPOINT: dynamodbEndpoint,
    ...(sqsEndpoint ? { MSG_SQS_ENDPOINT: sqsEndpoint } : {}),
    ...(receiptKey ? { MSG_RECEIPT_KEY: receiptKey } : {}),
    MSG_BASE_DOMAIN: 'localhost',
    MSG_ENDPOINT_TEMPLATE: `http://{namespace}.localhost:${port}/api/v1`,
    MSG_ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true',
    MSG_WEBHOOK_TLS_FILE_PATHS: 'true',
    // TLS files of webhooks (ca_cert, client_cert, client_key given as paths) must be under it.
    MSG_WEBHOOK_TLS_DIR: resolve('tls'),
    // Never webhook targets, whatever MSG_ALLOW_PRIVATE_WEBHOOK_TARGETS says (docs/security.md).
    MSG_RUNTIME_ENDPOINTS: [`http://127.0.0.1:${port}`, dynamodbEndpoint, ...(sqsEndpoint ? [sqsEndpoint] : [])].join(','),
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    POWERTOOLS_SERVICE_NAME: 'messaging',
    POWERTOOLS_LOG_LEVEL: 'WARN',
    POWERTOOLS_TRACE_ENABLED: 'false',
    POWERTOOLS_METRICS_NAMESPACE: 'Messaging',
    // EMF lines on stdout would drown the local log; POWERTOOLS_METRICS_DISABLED=false shows them.
    POWERTOOLS_METRICS_DISABLED: 'true',
    POWERTOOLS_DEV: 'true',
  };
  const out: Record<string, string> = {};
  // The engines' endpoints are the ones this runtime resolved (from the environment or started).
  const resolved = new Set(['MSG_DYNAMODB_ENDPOINT', 'MSG_SQS_ENDPOINT', 'MSG_RUNTIME_ENDPOINTS']);
  for (const [k, v] of Object.entries(defaults)) out[k] = env[k] && !resolved.has(k) ? (env[k] as string) : v;
  return out;
}
