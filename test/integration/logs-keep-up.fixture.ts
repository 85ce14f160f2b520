/**
 * Probes of test/integration/logs-keep-up.test.ts, on this process's DynamoDB client (the calls
 * still go to DynamoDB Local): what a path reads, and a clock that jumps while a publish stalls.
 * Each spies on the shared client with jest; the test's `afterEach` restores the spies.
 */
import { BatchWriteCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName } from '../../lambda/core/storage/client';

type Send = (c: unknown, ...r: unknown[]) => Promise<unknown>;

/**
 * Counts the Queries of `table` sent while `fn` runs and the items (log chunks, for a log table)
 * they returned.
 */
export async function queriesOf<T>(table: 'streamLog' | 'subscriptionLog' | 'meta', fn: () => Promise<T>): Promise<{ result: T; chunks: number; queries: number }> {
  const client = ddb();
  const send = client.send.bind(client) as Send;
  let chunks = 0;
  let queries = 0;
  jest.spyOn(client, 'send').mockImplementation((async (cmd: unknown, ...rest: unknown[]) => {
    const ours = cmd instanceof QueryCommand && cmd.input.TableName === tableName(table);
    if (ours) queries++;
    const out = await send(cmd, ...rest);
    if (ours) chunks += ((out as { Items?: unknown[] }).Items ?? []).length;
    return out;
  }) as never);
  try {
    return { result: await fn(), chunks, queries };
  } finally {
    jest.restoreAllMocks();
  }
}

/** Adds up the `b` (payload bytes) of the stream log chunks every Query returns until `stop()`. */
export function streamLogBytes(): { bytes: () => number; stop: () => void } {
  const client = ddb();
  const send = client.send.bind(client) as Send;
  let bytes = 0;
  jest.spyOn(client, 'send').mockImplementation((async (cmd: unknown, ...rest: unknown[]) => {
    const out = await send(cmd, ...rest);
    if (cmd instanceof QueryCommand && cmd.input.TableName === tableName('streamLog')) for (const c of (out as { Items?: { b: number }[] }).Items ?? []) bytes += c.b;
    return out;
  }) as never);
  return { bytes: () => bytes, stop: () => jest.restoreAllMocks() };
}

/**
 * Makes the clock jump `ms` forward when `when(cmd)` is first sent, as a publish that stalled
 * there; `beforeSend` runs before each call is sent.
 */
export function stallAt(when: (cmd: unknown) => boolean, ms: number, beforeSend?: (cmd: unknown, shifted: boolean) => Promise<void>) {
  const realNow = Date.now.bind(Date);
  let shift = 0;
  const client = ddb();
  const send = client.send.bind(client) as Send;
  jest.spyOn(Date, 'now').mockImplementation(() => realNow() + shift);
  jest.spyOn(client, 'send').mockImplementation((async (cmd: unknown, ...rest: unknown[]) => {
    await beforeSend?.(cmd, shift !== 0);
    const out = await send(cmd, ...rest);
    if (shift === 0 && when(cmd)) shift = ms;
    return out;
  }) as never);
}

/** A publish's reservation: its update of the log's head. */
export const isReservation = (cmd: unknown) => cmd instanceof UpdateCommand && String(cmd.input.UpdateExpression).includes('lt = :tok');
/** A publish's write of its chunks to the stream log. */
export const isChunkWrite = (cmd: unknown) => cmd instanceof BatchWriteCommand && Object.keys(cmd.input.RequestItems ?? {}).includes(tableName('streamLog'));
