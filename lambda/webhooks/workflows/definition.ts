/**
 * The retry workflow's ASL file and its one substitution (the delivery queue's URL), shared by the
 * CDK stack (which passes the same placeholder to `DefinitionBody.fromFile` as
 * `definitionSubstitutions`) and the local runner (local/stepfunctions.ts).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const ASL_RELATIVE = join('lambda', 'webhooks', 'workflows', 'webhook-retry.asl.json');

/**
 * Path of the ASL file: found from the working directory upwards (this module runs as ESM under
 * tsx and as CommonJS under jest, so neither `__dirname` nor `import.meta` works in both).
 */
export function webhookRetryAslPath(from = process.cwd()): string {
  for (let dir = resolve(from); ; dir = dirname(dir)) {
    if (existsSync(join(dir, ASL_RELATIVE))) return join(dir, ASL_RELATIVE);
    if (dirname(dir) === dir) throw new Error(`${ASL_RELATIVE} not found above ${from}`);
  }
}
/** The placeholder of the delivery queue's URL (`${DeliveryQueueUrl}` in the file). */
export const DELIVERY_QUEUE_PLACEHOLDER = 'DeliveryQueueUrl';
/** The Task state that sends the retry job (the SQS integration), which the local runner binds to a real SendMessage. */
export const QUEUE_STATE = 'Queue';
/** The SQS integration's resource (https://docs.aws.amazon.com/step-functions/latest/dg/connect-sqs.html). */
export const SQS_SEND_RESOURCE = 'arn:aws:states:::sqs:sendMessage';
/** The parameters the Queue state passes to SendMessage (its Parameters, evaluated). */
export interface QueueTaskInput {
  QueueUrl: string;
  MessageBody: string;
  MessageGroupId?: string;
}

/** The definition with `${name}` placeholders replaced, as Step Functions does it. */
export function substitutedDefinition(substitutions: Record<string, string>, path = webhookRetryAslPath()): unknown {
  const text = readFileSync(path, 'utf8').replace(/\$\{(\w+)\}/g, (whole, name: string) => {
    const v = substitutions[name];
    return v === undefined ? whole : v;
  });
  return JSON.parse(text);
}
