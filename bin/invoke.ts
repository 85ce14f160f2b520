/**
 * `npm run invoke -- <function> <event.json>`: runs one Lambda handler once on an event, in this
 * process, with the environment the local runtime gives it, against the DynamoDB of a running
 * `npm start` (found by its port, like the admin CLI) or of --endpoint. Prints the handler's
 * result as JSON on stdout; logs and errors go to stderr. What `sam local invoke` is for SAM
 * users. Sample events are under events/ (README "Local runtime").
 */
import { readFileSync } from 'node:fs';
import { randomBytes, randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { AdminError, resolveTarget, useTarget } from './admin-target';
import { TABLES } from '../lambda/core/storage/tables';
import type { FunctionId } from '../lib/table-access';
import { lambdaContext } from '../local/lambda-context';
import { localEnvironment } from '../local/environment';
import { readStateFile } from '../local/state-file';

/** Each function's handler module under lambda/handlers/, and the timeout lib/constructs/ gives it. */
export const FUNCTIONS: Record<FunctionId, { module: string; timeoutMs: number }> = {
  namespace: { module: 'namespace', timeoutMs: 29_000 },
  publish: { module: 'publish', timeoutMs: 29_000 },
  queues: { module: 'queues', timeoutMs: 29_000 },
  streams: { module: 'streams', timeoutMs: 29_000 },
  subscriptions: { module: 'subscriptions', timeoutMs: 29_000 },
  webhooks: { module: 'webhooks', timeoutMs: 29_000 },
  schedules: { module: 'schedules', timeoutMs: 29_000 },
  catalog: { module: 'catalog', timeoutMs: 29_000 },
  applications: { module: 'applications', timeoutMs: 29_000 },
  scheduler: { module: 'scheduler', timeoutMs: 60_000 },
  authorizer: { module: 'authorizer', timeoutMs: 10_000 },
  portalPage: { module: 'portal-page', timeoutMs: 10_000 },
  sweeper: { module: 'sweeper', timeoutMs: 120_000 },
  webhookDelivery: { module: 'webhook-delivery', timeoutMs: 60_000 },
  webhookAttempt: { module: 'webhook-attempt', timeoutMs: 60_000 },
};

export const USAGE = `Usage: npm run -s invoke -- <function> <event.json | -> [--port N | --endpoint URL]

Runs one handler once on the event (a JSON file, or - for stdin) and prints its result as JSON.
It uses the DynamoDB of the npm start on port 8080 (--port N for another), or --endpoint URL.

Functions: ${Object.keys(FUNCTIONS).join(', ')}
Sample events: events/ (e.g. npm run -s invoke -- queues events/queues-create.json)
`;

type Handler = (event: unknown, context: unknown) => Promise<unknown>;

/** The function id for a name as the stack (`webhookDelivery`) or the file (`webhook-delivery`) spells it. */
export function functionId(name: string): FunctionId {
  const found = (Object.keys(FUNCTIONS) as FunctionId[]).find((id) => id === name || FUNCTIONS[id].module === name);
  if (!found) throw new AdminError(`unknown function "${name}"; one of ${Object.keys(FUNCTIONS).join(', ')}`, 2);
  return found;
}

/**
 * Points the Lambda code at the target's DynamoDB and SQS with the local runtime's environment,
 * and the runtime's own table names when it renamed them.
 */
function useLocalEnvironment(endpoint: string, sqsEndpoint: string | undefined, port: number) {
  Object.assign(process.env, localEnvironment({ port, dynamodbEndpoint: endpoint, sqsEndpoint, env: process.env }), { POWERTOOLS_LOG_LEVEL: process.env.POWERTOOLS_LOG_LEVEL ?? 'INFO' });
  // Receipt handles are signed with the runtime's key (in its state file), so a handle made here
  // acks through the runtime's API and the other way round; with no runtime, a key of our own.
  const state = readStateFile(port);
  process.env.MSG_RECEIPT_KEY ??= state?.dynamodbEndpoint === endpoint && state.receiptKey ? state.receiptKey : randomBytes(32).toString('hex');
  if (state?.dynamodbEndpoint === endpoint) for (const t of Object.values(TABLES)) if (state.tables[t.id]) process.env[t.envVar] = state.tables[t.id];
}

/**
 * Runs `fn` on `event` with a Lambda context; resolves to the handler's result. Publishes queue
 * webhook jobs on the local runtime's delivery queue (its event source delivers them); a retry
 * workflow started here runs in this process and ends with it.
 */
export async function invoke(fn: FunctionId, event: unknown): Promise<unknown> {
  const { resetConfig } = await import('../lambda/core/config');
  const { resetClients } = await import('../lambda/core/storage/client');
  const { resetSqsClient } = await import('../lambda/core/adapters/sqs');
  const { ensureDeliveryQueues } = await import('../local/webhooks');
  const { LocalRetryWorkflow } = await import('../local/stepfunctions');
  const { setRetryWorkflow } = await import('../lambda/webhooks/storage/retry-workflow');
  const { closeAgents } = await import('../lambda/webhooks/storage/http-delivery');
  const { runAction } = await import('../lambda/handlers/webhook-attempt');
  resetConfig();
  resetClients();
  resetSqsClient();
  process.env.MSG_WEBHOOK_QUEUE_URL ??= (await ensureDeliveryQueues()).url;
  resetConfig();
  const workflow = new LocalRetryWorkflow(runAction, (l) => process.stderr.write(`${l}\n`));
  setRetryWorkflow(workflow);
  try {
    const { handler } = (await import(`../lambda/handlers/${FUNCTIONS[fn].module}`)) as { handler: Handler };
    return await handler(event, lambdaContext(`msg-${fn}`, randomUUID(), FUNCTIONS[fn].timeoutMs));
  } finally {
    await workflow.stop();
    setRetryWorkflow(undefined);
    await closeAgents();
  }
}

/** The command line; resolves to the exit status (0 done, 1 failed, 2 wrong command line). */
export async function main(argv: string[], out: (s: string) => void = (s) => process.stdout.write(s), err: (s: string) => void = (s) => process.stderr.write(s)): Promise<number> {
  try {
    let parsed;
    try {
      parsed = parseArgs({ args: argv, allowPositionals: true, options: { port: { type: 'string' }, endpoint: { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
    } catch (e) {
      throw new AdminError(`${(e as Error).message}\n\n${USAGE}`, 2);
    }
    const [name, file] = parsed.positionals;
    if (parsed.values.help) {
      out(USAGE);
      return 0;
    }
    if (!name || !file || parsed.positionals.length > 2) throw new AdminError(`invoke takes <function> <event.json>\n\n${USAGE}`, 2);
    const fn = functionId(name);
    let event: unknown;
    try {
      event = JSON.parse(readFileSync(file === '-' ? 0 : file, 'utf8'));
    } catch (e) {
      throw new AdminError(`cannot read the event ${file}: ${(e as Error).message}`, 2);
    }
    const target = resolveTarget({ port: parsed.values.port, endpoint: parsed.values.endpoint }, process.env);
    if (target.kind !== 'endpoint') throw new AdminError('invoke runs handlers against a local DynamoDB: the npm start on --port, or --endpoint URL', 2);
    err(`invoking ${fn} (lambda/handlers/${FUNCTIONS[fn].module}.ts) against ${target.describe}\n`);
    await useTarget(target);
    useLocalEnvironment(target.endpoint, target.sqs.endpoint, Number(parsed.values.port ?? (process.env.PORT || 8080)));
    const result = await invoke(fn, event);
    out(`${JSON.stringify(result ?? null, null, 2)}\n`);
    return 0;
  } catch (e) {
    err(`error: ${e instanceof AdminError ? e.message : ((e as Error).stack ?? String(e))}\n`);
    return e instanceof AdminError ? e.exitCode : 1;
  }
}

// Runs when started as a program (npm run invoke); importing the module (tests) runs nothing.
if (/[\\/]bin[\\/]invoke\.ts$/.test(process.argv[1] ?? '')) {
  // In Lambda a handler's log lines (Powertools, console) go to stdout; here stdout carries the
  // result alone, so `npm run -s invoke ... | jq` parses. Everything else written to stdout from
  // now on goes to stderr.
  const stdout = process.stdout.write.bind(process.stdout);
  process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;
  void main(process.argv.slice(2), (s) => stdout(s)).then((code) => {
    process.exitCode = code;
  });
}
