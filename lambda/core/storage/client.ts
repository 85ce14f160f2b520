/**
 * The DynamoDB document client, created once per container and shared (STYLE.md habit 2).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { BatchWriteCommand, DynamoDBDocumentClient, paginateQuery, TransactWriteCommand, type QueryCommandInput, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { config } from '../config';
import { withClientPlugins } from '../client-plugins';
import type { TableId } from './tables';
import type { DeserializeMiddleware, MetadataBearer } from '@smithy/types';

let doc: DynamoDBDocumentClient | undefined;
let raw: DynamoDBClient | undefined;

export function dynamoClient(): DynamoDBClient {
  if (!raw) {
    const { region, dynamodbEndpoint } = config();
    raw = withClientPlugins(
      'dynamodb',
      retryTransactionConflicts(
        new DynamoDBClient({
          region,
          ...(dynamodbEndpoint
            ? { endpoint: dynamodbEndpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }
            : {}),
        }),
      ),
    );
  }
  return raw;
}

/**
 * A single-item write (PutItem, UpdateItem, DeleteItem) that meets a transaction in progress on
 * its item is rejected with `TransactionConflictException` and writes nothing ("Transaction
 * conflict handling in DynamoDB",
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-conflict-handling;
 * the UpdateItem API reference lists it). The SDK's standard retry strategy does not count it
 * retryable, so a plain write to a counters item that a transaction (a held message's write, a
 * cancel) holds for a few milliseconds would fail its whole request. This marks it transient, so
 * the SDK's own retries (backoff, retry quota) send it again: nothing was applied.
 */
export function retryTransactionConflicts<C extends DynamoDBClient>(client: C): C {
  const mark: DeserializeMiddleware<object, MetadataBearer> = (next) => async (args) => {
    try {
      return await next(args);
    } catch (e) {
      if ((e as { name?: string })?.name === 'TransactionConflictException') Object.assign(e as object, { $retryable: { throttling: false } });
      throw e;
    }
  };
  client.middlewareStack.addRelativeTo(mark, { relation: 'before', toMiddleware: 'deserializerMiddleware', name: 'retryTransactionConflicts' });
  return client;
}

export function ddb(): DynamoDBDocumentClient {
  return (doc ??= DynamoDBDocumentClient.from(dynamoClient(), {
    marshallOptions: { removeUndefinedValues: true },
  }));
}

/** Physical name of a table in this deployment. */
export const tableName = (id: TableId): string => config().tableNames[id];

/** Drops the cached clients (tests that switch endpoints). */
export function resetClients() {
  raw?.destroy();
  raw = undefined;
  doc = undefined;
}

/** Whether an SDK error is a failed condition (of a single write or of a transaction item). */
export function isConditionFailed(e: unknown): boolean {
  const name = (e as { name?: string })?.name;
  if (name === 'ConditionalCheckFailedException') return true;
  if (name === 'TransactionCanceledException') {
    const reasons = (e as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
    return reasons.some((r) => r.Code === 'ConditionalCheckFailed');
  }
  return false;
}

/**
 * Whether a transaction was cancelled only because another one held one of its items
 * (`TransactionConflict`; AWS does this, DynamoDB Local never does): nothing was written, so the
 * same transaction may be sent again.
 */
export function isTransactionConflict(e: unknown): boolean {
  if ((e as { name?: string })?.name !== 'TransactionCanceledException') return false;
  const codes = ((e as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? []).map((r) => r.Code ?? 'None');
  return codes.includes('TransactionConflict') && !codes.includes('ConditionalCheckFailed');
}

/**
 * How long to wait before sending again the `n`th time (from 1) a transaction cancelled on a
 * conflict: a random share of a doubling ceiling (10 ms, 20 ms, ... up to 500), so writers that
 * met once do not meet again at the same instant.
 */
export const conflictBackoffMs = (n: number): number => Math.random() * Math.min(500, 10 * 2 ** n);

/** Tries of a transaction cancelled on a conflict with another one, for the writes that must apply once. */
export const CONFLICT_TRIES = 8;

/**
 * Whether a call of a transaction that failed with `e` cannot have been applied: cancelled on a
 * conflict at its only attempt. After more attempts (the SDK's retries of a lost answer, with the
 * same ClientRequestToken), an earlier one may have been.
 */
const surelyNotApplied = (e: unknown): boolean => isTransactionConflict(e) && ((e as { $metadata?: { attempts?: number } }).$metadata?.attempts ?? 1) <= 1;

/** Every item a Query matches, over all its pages (the SDK's paginator). */
export async function queryAll<T>(input: Omit<QueryCommandInput, 'ExclusiveStartKey' | 'Select'>): Promise<T[]> {
  const out: T[] = [];
  for await (const page of paginateQuery({ client: ddb() }, input)) out.push(...((page.Items ?? []) as T[]));
  return out;
}

/** How many items a Query matches (after its filter), over all its pages, with `Select: COUNT`. */
export async function countAll(input: Omit<QueryCommandInput, 'ExclusiveStartKey' | 'Select' | 'ProjectionExpression'>): Promise<number> {
  let n = 0;
  for await (const page of paginateQuery({ client: ddb() }, { ...input, Select: 'COUNT' })) n += page.Count ?? 0;
  return n;
}

const BATCH_WRITE_MAX = 25;

/** Writes items with BatchWriteItem (25 per call, in parallel), retrying unprocessed items with backoff until all are stored. */
export async function batchWrite(table: string, requests: Record<string, unknown>[]): Promise<void> {
  const chunks: Record<string, unknown>[][] = [];
  for (let i = 0; i < requests.length; i += BATCH_WRITE_MAX) chunks.push(requests.slice(i, i + BATCH_WRITE_MAX));
  await Promise.all(
    chunks.map(async (chunk) => {
      let pending = chunk;
      for (let attempt = 0; pending.length > 0; attempt++) {
        if (attempt > 8) throw new Error(`BatchWriteItem on ${table} left ${pending.length} items unprocessed after retries`);
        if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(1000, 25 * 2 ** attempt)));
        const out = await ddb().send(new BatchWriteCommand({ RequestItems: { [table]: pending } }));
        pending = (out.UnprocessedItems?.[table] ?? []) as Record<string, unknown>[];
      }
    }),
  );
}

/**
 * Sends one UpdateItem so that the SDK's retry of a call DynamoDB applied but whose answer was
 * lost is not applied again: as a one-item TransactWriteItems with a ClientRequestToken fresh per
 * call ("subsequent TransactWriteItems calls with the same client token return successfully
 * without making any changes", for 10 minutes:
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html#DDB-TransactWriteItems-request-ClientRequestToken).
 * (SDK v3 fills in a token itself when none is given, the field being an idempotency token in
 * the service model; it is given here so the guarantee does not rest on that.) For an ADD that
 * must be counted once (a transaction costs two write units, so not for hot paths).
 * A failed condition throws like a transaction's (isConditionFailed answers true).
 */
export async function updateOnce(update: Record<string, unknown>): Promise<void> {
  await transactWrite({ TransactItems: [{ Update: update as never }] });
}

/**
 * The ClientRequestToken of a transaction that must apply once, kept by a caller that sends it
 * again itself after an error other than a conflict: `transactWrite` sets `maybeApplied` when a
 * try may have been applied and changes `token` only while no try may have been, so the caller's
 * next call carries the token of the try that may have applied it (and cannot apply it twice).
 * A token the caller derives (the same for every run and copy) starts with `maybeApplied` true:
 * it is never replaced.
 */
export interface OnceToken {
  token: string;
  maybeApplied: boolean;
}

export const onceToken = (): OnceToken => ({ token: randomUUID(), maybeApplied: false });

/**
 * Sends a TransactWriteItems, again after a random wait when it is cancelled because other
 * requests held its items (`TransactionConflict`: many writers of one counter, count or bucket
 * item at once; nothing was written,
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-conflict-handling),
 * again up to `retries` times ({@link CONFLICT_TRIES} unless given). It carries a
 * ClientRequestToken (`once`'s, else a fresh one), new for each try unless a try may have been
 * applied (an attempt before the conflict whose answer was lost, or an earlier call with `once`):
 * then the same one, which cannot apply it twice. Other errors, failed conditions among them, are
 * thrown as they come.
 *
 * `abortSignal` bounds the whole call, the SDK's own retries included: once it fires, no attempt
 * starts (the SDK's retry middleware races each of its waits against it, its HTTP handler ends an
 * attempt in flight, both with an `AbortError`), nor does a wait here go on; an attempt cut off in
 * flight leaves the outcome unknown, as a lost answer does (the SDK's `abortSignal` send option,
 * https://aws.amazon.com/blogs/developer/abortcontroller-in-modular-aws-sdk-for-javascript/).
 */
export async function transactWrite(
  input: Omit<TransactWriteCommandInput, 'ClientRequestToken'>,
  opts: { retries?: number; once?: OnceToken; abortSignal?: AbortSignal } = {},
): Promise<void> {
  const retries = opts.retries ?? CONFLICT_TRIES;
  const once = opts.once ?? onceToken();
  const signal = opts.abortSignal;
  for (let conflicts = 0; ; ) {
    try {
      const command = new TransactWriteCommand({ ...input, ClientRequestToken: once.token });
      await (signal ? ddb().send(command, { abortSignal: signal }) : ddb().send(command));
      return;
    } catch (e) {
      once.maybeApplied ||= !surelyNotApplied(e);
      if (!isTransactionConflict(e) || ++conflicts > retries) throw e;
      if (!once.maybeApplied) once.token = randomUUID();
      if (signal) await sleep(conflictBackoffMs(conflicts), undefined, { signal });
      else await new Promise((r) => setTimeout(r, conflictBackoffMs(conflicts)));
    }
  }
}
