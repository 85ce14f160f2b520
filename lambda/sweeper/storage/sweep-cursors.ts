/**
 * Where the sweeper stopped, per task, in the metadata table (keys.ts `sweepCursor` and
 * `sweepNamespaceCursor`): the next run resumes there instead of starting over, so a round over
 * every resource may span many runs and no resource waits behind a restart from the top.
 */
import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName } from '../../core/storage/client';
import { metaKeys } from '../../core/storage/keys';

export interface SweepCursor {
  /** The last namespace whose resources the round has finished (the round goes on after it). */
  last_ns?: string;
  /** The last purge job visited (its sort key). */
  purge_after?: string;
  /** Completed rounds over all namespaces (for monitoring). */
  rounds?: number;
  updated_at?: number;
}

export async function getSweepCursor(task: string): Promise<SweepCursor> {
  const out = await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: metaKeys.sweepCursor(task), ConsistentRead: true }));
  const { pk: _pk, sk: _sk, ...cursor } = (out.Item ?? {}) as Record<string, unknown>;
  return cursor as SweepCursor;
}

export async function saveSweepCursor(task: string, cursor: SweepCursor): Promise<void> {
  await ddb().send(new PutCommand({ TableName: tableName('meta'), Item: { ...metaKeys.sweepCursor(task), ...cursor } }));
}

/** The last resource visited (its sort key) in a namespace the round stopped inside. */
export async function getNamespaceCursor(ns: string, task: string): Promise<string | undefined> {
  const out = await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: metaKeys.sweepNamespaceCursor(ns, task), ConsistentRead: true }));
  return out.Item?.after as string | undefined;
}

/** Stores (or, with undefined, clears) the place within a namespace. */
export async function setNamespaceCursor(ns: string, task: string, after: string | undefined): Promise<void> {
  const Key = metaKeys.sweepNamespaceCursor(ns, task);
  if (after === undefined) await ddb().send(new DeleteCommand({ TableName: tableName('meta'), Key }));
  else await ddb().send(new PutCommand({ TableName: tableName('meta'), Item: { ...Key, after } }));
}
