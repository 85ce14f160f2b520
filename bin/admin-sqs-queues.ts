/**
 * `npm run admin -- sqs-queues list|delete`: the SQS queues a deployment created for its service
 * queues (named `<prefix><queue id>`, lambda/queues/storage/service-queues.ts). They are made at runtime,
 * so `cdk destroy` does not remove them; these commands find them by the stack's prefix (the
 * `SqsQueuePrefix` output), show which service queue each belongs to (tags), and delete the ones
 * no queue uses any more (`--orphans`, the default) or all of them (`--all`, after `cdk destroy`).
 * Without `--yes`, delete only says what it would delete.
 */
import { AdminError } from './admin-target';
import { config } from '../lambda/core/config';
import { deleteSqsQueue, listSqsQueues, QUEUE_TAGS, type ListedSqsQueue } from '../lambda/queues/storage/service-queues';
import { getQueue } from '../lambda/queues/storage/queues';

export interface SqsQueuesFlags {
  all?: boolean;
  orphans?: boolean;
  yes?: boolean;
  namespace?: string;
  'min-age'?: string;
}

/** Seconds an unused SQS queue must have existed before `delete --orphans` takes it. */
const DEFAULT_MIN_AGE_SECONDS = 300;

function minAgeMs(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_MIN_AGE_SECONDS * 1000;
  if (!/^\d+$/.test(raw)) throw new AdminError(`--min-age ${raw} is not a number of seconds: give a whole number, 0 or more`, 2);
  return Number(raw) * 1000;
}

interface ListedQueue extends ListedSqsQueue {
  namespace: string | null;
  queue: string | null;
  /** Whether a current service queue uses it (false: left by a deleted queue or a destroyed stack). */
  in_use: boolean | null;
}

/** Every SQS queue of the deployment's prefix, with the service queue it belongs to. */
async function listDeploymentQueues(checkUse: boolean, namespace?: string): Promise<ListedQueue[]> {
  const listed = (await listSqsQueues(config().sqsQueuePrefix)).filter((q) => !namespace || q.tags[QUEUE_TAGS.namespace] === namespace);
  return Promise.all(
    listed.map(async (q) => {
      const namespace = q.tags[QUEUE_TAGS.namespace] ?? null;
      const queue = q.tags[QUEUE_TAGS.queue] ?? null;
      const in_use = !checkUse ? null : namespace && queue ? (await getQueue(namespace, queue))?.sqs_queue === q.name : false;
      return { ...q, namespace, queue, in_use };
    }),
  );
}

const depth = (q: ListedSqsQueue) => (q.counts ? q.counts.visible + q.counts.inFlight + q.counts.delayed : 0);

function sqsQueuesText(queues: ListedQueue[]): string {
  if (!queues.length) return `no SQS queues with the prefix ${config().sqsQueuePrefix}`;
  const rows = [['SQS QUEUE', 'NAMESPACE', 'QUEUE', 'MESSAGES', 'IN USE'], ...queues.map((q) => [q.name, q.namespace ?? '-', q.queue ?? '-', String(depth(q)), q.in_use === null ? '?' : q.in_use ? 'yes' : 'no'])];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd()).join('\n');
}

export async function runSqsQueues(
  verb: 'list' | 'delete',
  flags: SqsQueuesFlags,
  print: (human: string, json: unknown) => void,
  progress: (line: string) => void,
): Promise<void> {
  if (flags.all && flags.orphans) throw new AdminError('give either --all or --orphans, not both', 2);
  const minAge = minAgeMs(flags['min-age']);
  // --all needs no table: it is what is left after `cdk destroy` removed them.
  const queues = await listDeploymentQueues(!flags.all, flags.namespace);
  if (verb === 'list') return print(sqsQueuesText(queues), queues);
  const now = Date.now();
  const doomed = flags.all ? queues : queues.filter((q) => q.in_use === false && now - (q.createdAt ?? now) >= minAge);
  const messages = doomed.reduce((n, q) => n + depth(q), 0);
  if (!flags.yes) {
    return print(
      `would delete ${doomed.length} SQS queue(s) holding ${messages} message(s)${flags.all ? ' (all of the prefix)' : ' that no queue uses'}; nothing changed. Run again with --yes to delete them.`,
      { dry_run: true, would_delete: doomed.map((q) => q.name), messages },
    );
  }
  const started = Date.now();
  let deleted = 0;
  for (const q of doomed) {
    if (await deleteSqsQueue(q.name)) deleted++;
    progress(`deleted ${deleted}/${doomed.length} SQS queue(s) (${((deleted / Math.max(1, Date.now() - started)) * 1000).toFixed(1)}/s)`);
  }
  print(`deleted ${deleted} SQS queue(s) holding ${messages} message(s)`, { dry_run: false, deleted: doomed.map((q) => q.name), messages });
}
