/**
 * AWS list prices used to turn measured request and capacity counts into cost per million
 * messages. us-east-1, on-demand, as published by AWS (DynamoDB on-demand after the November 2024
 * price cut). Read on 2025-06-01; check https://aws.amazon.com/pricing before relying on them.
 */
import { DEFAULT_MEMORY_MB, QUEUES_MEMORY_MB } from '../lib/function-memory';

export const PRICES = {
  readAt: '2025-06-01',
  region: 'us-east-1',
  /** DynamoDB on-demand, per write request unit / read request unit. */
  dynamoWriteRequestUnit: 0.625 / 1e6,
  dynamoReadRequestUnit: 0.125 / 1e6,
  /** API Gateway REST API, per request (first 333 million a month). */
  apiGatewayRestRequest: 3.5 / 1e6,
  /** Lambda arm64: per request and per GB-second. */
  lambdaRequest: 0.2 / 1e6,
  lambdaArmGbSecond: 0.0000133334,
  /** SQS standard queue, per request (a batch of up to 10 messages is one request). */
  sqsRequest: 0.4 / 1e6,
  /**
   * SNS standard topic, per publish request (a PublishBatch of up to 10 messages is one request
   * per 64 KB of payload). Deliveries from SNS to SQS queues are free.
   */
  snsPublishRequest: 0.5 / 1e6,
  /**
   * AWS WAF, per request inspected: the size guard's web ACL on the API stage (context
   * `sizeGuard`, on by default; plus $5 a month for the web ACL and $1 for its rule).
   */
  wafRequest: 0.6 / 1e6,
  wafWebAclMonth: 5,
  wafRuleMonth: 1,
  /** KMS, per API request (GenerateDataKey, Decrypt): $0.03 per 10,000. */
  kmsRequest: 0.03 / 1e4,
  /** Step Functions standard workflows, per state transition. */
  stepFunctionsTransition: 0.025 / 1000,
} as const;

/** Memory the stack gives the API handlers (lib/constructs/functions.ts). */
export const LAMBDA_MEMORY_GB = DEFAULT_MEMORY_MB / 1024;
/** Memory of the queues function (consume, ack), lib/constructs/functions.ts. */
export const QUEUES_LAMBDA_MEMORY_GB = QUEUES_MEMORY_MB / 1024;

export interface RequestCost {
  /** API requests per message (1 for single, 1/batch for batches). */
  apiRequestsPerMessage: number;
  readUnitsPerMessage: number;
  writeUnitsPerMessage: number;
  /** SQS requests per message, as billed (each 64 KiB of a request's payload is one). @default 0 */
  sqsRequestsPerMessage?: number;
  /** Handler time per message in ms (from the measured latency of the local handler). */
  lambdaMsPerMessage: number;
  /** Memory of the function that ran it. @default LAMBDA_MEMORY_GB */
  memoryGb?: number;
}

/** US dollars per million messages for one operation. */
export function costPerMillion(c: RequestCost): number {
  const perMessage =
    c.apiRequestsPerMessage * (PRICES.apiGatewayRestRequest + PRICES.wafRequest + PRICES.lambdaRequest) +
    (c.lambdaMsPerMessage / 1000) * (c.memoryGb ?? LAMBDA_MEMORY_GB) * PRICES.lambdaArmGbSecond +
    c.readUnitsPerMessage * PRICES.dynamoReadRequestUnit +
    c.writeUnitsPerMessage * PRICES.dynamoWriteRequestUnit +
    (c.sqsRequestsPerMessage ?? 0) * PRICES.sqsRequest;
  return Math.round(perMessage * 1e6 * 100) / 100;
}

/** SQS and SNS take at most 10 messages per request (SendMessageBatch, ReceiveMessage, DeleteMessageBatch, PublishBatch). */
const perRequest = (batch: number) => 1 / Math.min(Math.max(1, batch), 10);

/**
 * The reference points of the cost chart: USD per million small messages (under 64 KB) sent,
 * received and deleted in batches of `batch` on plain SQS, and published to SNS and fanned out to
 * one SQS queue (SNS publish, then SQS receive and delete). Requests only: no API layer, no
 * compute, no storage beyond the queue.
 * @example listPricePerMillion('sqs', 1) // 1.2: three requests per message at $0.40 per million
 */
export function listPricePerMillion(kind: 'sqs' | 'sns+sqs', batch: number): number {
  const sqsReceiveDelete = 2 * perRequest(batch) * PRICES.sqsRequest;
  const send = kind === 'sqs' ? perRequest(batch) * PRICES.sqsRequest : perRequest(batch) * PRICES.snsPublishRequest;
  return Math.round((send + sqsReceiveDelete) * 1e6 * 1000) / 1000;
}
