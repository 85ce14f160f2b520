/**
 * `npm run admin -- redrive <namespace> <queue> --to-topic <topic> [--max N] [--dry-run]`: moves
 * messages out of a queue (typically a dead-letter topic's) back to a topic
 * (lambda/queues/redrive.ts). Publishing writes to every table a topic can reach, so this command
 * needs all the table names of the target, not only the metadata table the other commands use:
 * from the local runtime's state file, from a deployed stack's outputs file, or from the
 * environment (MSG_QUEUE_MESSAGES_TABLE and friends).
 */
import { readFileSync } from 'node:fs';
import { AdminError } from './admin-target';
import { RESOURCE_NAME } from '../lambda/core/rules/validation';
import { topicNameProblem } from '../lambda/core/rules/topics';
import { ApiError } from '../lambda/core/rules/errors';
import { TABLES, type TableId } from '../lambda/core/storage/tables';
import { resetConfig } from '../lambda/core/config';
import { resetClients } from '../lambda/core/storage/client';
import { readStateFile } from '../local/state-file';
import { tableNameOutput, WEBHOOK_QUEUE_URL_OUTPUT } from '../lib/stack-outputs';
import { redrive, type RedriveResult } from '../lambda/queues/redrive';
import type { Progress } from './admin-progress';

export interface RedriveFlags {
  'to-topic'?: string;
  max?: string;
  'dry-run'?: boolean;
  outputs?: string;
  stack?: string;
  port?: string;
}

/** Checks the command line before anything is looked up. */
export function parseRedriveArgs(queue: string, flags: RedriveFlags): { toTopic: string; max?: number } {
  if (!RESOURCE_NAME.test(queue)) throw new AdminError(`"${queue}" is not a queue name`, 2);
  const toTopic = flags['to-topic'];
  if (!toTopic) throw new AdminError('redrive needs --to-topic TOPIC: the topic to publish the messages to', 2);
  const why = topicNameProblem(toTopic);
  if (why) throw new AdminError(`--to-topic ${toTopic} is not a topic name: ${why}`, 2);
  if (flags.max === undefined) return { toTopic };
  const max = Number(flags.max);
  if (!/^\d+$/.test(flags.max) || !Number.isSafeInteger(max) || max < 1) throw new AdminError(`--max ${flags.max} is not a count: give a whole number, 1 or more`, 2);
  return { toTopic, max };
}

/**
 * The physical table names of the target, by table id, or undefined where the environment (or the
 * local default) applies. Called after useTarget: MSG_DYNAMODB_ENDPOINT is set for local targets.
 */
export function redriveTableNames(flags: RedriveFlags, env: NodeJS.ProcessEnv): Partial<Record<TableId, string>> {
  if (flags.outputs) {
    const outputs = JSON.parse(readFileSync(flags.outputs, 'utf8')) as Record<string, Record<string, unknown>>;
    const stacks = Object.entries(outputs).filter(([name]) => !flags.stack || name === flags.stack);
    const names: Partial<Record<TableId, string>> = {};
    for (const t of Object.values(TABLES)) {
      const found = stacks.flatMap(([, outs]) => Object.entries(outs ?? {}).filter(([k, v]) => k.includes(tableNameOutput(t.id)) && typeof v === 'string'));
      if (found.length === 1) names[t.id] = found[0][1] as string;
    }
    return names;
  }
  if (env.MSG_DYNAMODB_ENDPOINT) {
    const state = readStateFile(Number(flags.port ?? 8080));
    return state?.dynamodbEndpoint === env.MSG_DYNAMODB_ENDPOINT ? (state.tables as Partial<Record<TableId, string>>) : {};
  }
  // A deployed stack named by --meta-table or MSG_META_TABLE: the others must come from the environment.
  const missing = Object.values(TABLES).filter((t) => !env[t.envVar]);
  if (missing.length) {
    throw new AdminError(
      `redrive against a deployed stack needs all its table names: pass --outputs cdk-outputs.json, or set ${missing.map((t) => t.envVar).join(', ')}`,
    );
  }
  return {};
}

/**
 * The webhook delivery queue URL from a deployed stack's outputs file, if given: publishing queues
 * a delivery job for every matching webhook, so a redrive to such a topic needs the stack's queue.
 */
export function webhookQueueUrlFromOutputs(flags: RedriveFlags): string | undefined {
  if (!flags.outputs) return undefined;
  const outputs = JSON.parse(readFileSync(flags.outputs, 'utf8')) as Record<string, Record<string, unknown>>;
  const urls = Object.entries(outputs)
    .filter(([name]) => !flags.stack || name === flags.stack)
    .flatMap(([, outs]) => Object.entries(outs ?? {}).filter(([k, v]) => k.includes(WEBHOOK_QUEUE_URL_OUTPUT) && typeof v === 'string'));
  return urls.length === 1 ? (urls[0][1] as string) : undefined;
}

/** Points the storage modules at every table of the target. */
export function useTables(names: Partial<Record<TableId, string>>) {
  for (const t of Object.values(TABLES)) {
    const name = names[t.id];
    if (name) process.env[t.envVar] = name;
  }
  resetConfig();
  resetClients();
}

export function redriveText(r: RedriveResult): string {
  if (r.dry_run) return `dry run: queue ${r.queue} holds ${r.found} message(s) (visible and in flight); ${r.moved} would be published to ${r.topic}; nothing changed`;
  const lines = [`moved ${r.moved} message(s) from queue ${r.queue} to topic ${r.topic}; ${r.remaining} left in the queue`];
  if (r.expired) lines.push(`removed ${r.expired} expired message(s) on the way`);
  if (r.published_not_removed) lines.push(`${r.published_not_removed} message(s) were published but their claim ended before the delete: they stay in the queue and may be moved again`);
  return lines.join('\n');
}

/** Runs the command; API errors (queue or topic missing, refused target) become admin errors. */
export async function runRedrive(ns: string, queue: string, flags: RedriveFlags, env: NodeJS.ProcessEnv, print: (human: string, json: unknown) => void, progress?: Progress) {
  const { toTopic, max } = parseRedriveArgs(queue, flags);
  const queueUrl = webhookQueueUrlFromOutputs(flags);
  if (queueUrl && !env.MSG_WEBHOOK_QUEUE_URL) env.MSG_WEBHOOK_QUEUE_URL = queueUrl;
  useTables(redriveTableNames(flags, env));
  try {
    const counts = (r: RedriveResult) => ({ expired: r.expired, published_not_removed: r.published_not_removed });
    const r = await redrive(ns, queue, {
      toTopic,
      max,
      dryRun: flags['dry-run'],
      onBatch: (soFar) => {
        progress?.setTotal(Math.min(soFar.found, max ?? Infinity));
        progress?.step(soFar.moved, counts(soFar));
      },
    });
    if (!r.dry_run) progress?.finish(r.moved, counts(r));
    print(redriveText(r), r);
  } catch (e) {
    if (e instanceof ApiError) throw new AdminError(`${e.code}: ${e.message}`);
    throw e;
  }
}
