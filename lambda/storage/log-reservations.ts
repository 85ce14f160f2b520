/**
 * Position reservations of append-only logs (streams and subscriptions), on the resource item in
 * the metadata table: one atomic UpdateItem per publish reserves a block of positions, counts the
 * messages and bytes, and records the block as pending; a second one clears the pending entry once
 * the log items are stored. Readers stop before the lowest pending block (domain/log-horizon.ts).
 */
import { randomBytes } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, isConditionFailed, tableName } from './client';
import { metaKeys, type ResourceKind } from './keys';
import { pendingToken } from '../domain/log-horizon';

/** The counter attribute of each log kind: the position the next message will get. */
export const NEXT_POSITION: Partial<Record<ResourceKind, string>> = { STREAM: 'next_offset', SUBSCRIPTION: 'next_seq' };
/** The oldest retained position of each log kind. */
export const EARLIEST_POSITION: Partial<Record<ResourceKind, string>> = { STREAM: 'earliest_offset', SUBSCRIPTION: 'earliest_seq' };

export interface LogTarget {
  namespace: string;
  kind: ResourceKind;
  name: string;
  id: string;
}

export interface Reservation {
  /** First position of the block; the block is [start, start + count). */
  start: number;
  token: string;
}

/**
 * Reserves `count` consecutive positions; undefined when the resource is gone (deleted or
 * recreated with another id since the binding was read).
 */
export async function reserveBlock(t: LogTarget, count: number, bytes: number, now: number): Promise<Reservation | undefined> {
  const token = pendingToken(now, randomBytes(6).toString('hex'));
  try {
    const out = await ddb().send(
      new UpdateCommand({
        TableName: tableName('meta'),
        Key: metaKeys.resource(t.namespace, t.kind, t.name),
        // Every operand is read before the update: the pending entry gets the block's start.
        UpdateExpression: 'SET #next = #next + :n, pending.#tok = #next ADD message_count :n, #bytes :b',
        ConditionExpression: 'id = :id',
        ExpressionAttributeNames: { '#next': NEXT_POSITION[t.kind] as string, '#tok': token, '#bytes': 'bytes' },
        ExpressionAttributeValues: { ':n': count, ':b': bytes, ':id': t.id },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    const next = out.Attributes?.[NEXT_POSITION[t.kind] as string] as number;
    return { start: next - count, token };
  } catch (e) {
    if (isConditionFailed(e)) return undefined;
    throw e;
  }
}

/** Clears pending entries (a finished publish, or reservations whose publish died). */
export async function clearPending(t: LogTarget, tokens: string[]): Promise<void> {
  if (tokens.length === 0) return;
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: tableName('meta'),
        Key: metaKeys.resource(t.namespace, t.kind, t.name),
        UpdateExpression: `REMOVE ${tokens.map((_, i) => `pending.#t${i}`).join(', ')}`,
        ConditionExpression: 'id = :id',
        ExpressionAttributeNames: Object.fromEntries(tokens.map((tok, i) => [`#t${i}`, tok])),
        ExpressionAttributeValues: { ':id': t.id },
      }),
    );
  } catch (e) {
    if (!isConditionFailed(e)) throw e; // deleted meanwhile: nothing to clear
  }
}

/**
 * Moves the oldest retained position forward after trimming, and takes the trimmed messages out
 * of the counters. Conditional on the position it read, so two sweeps never count a trim twice;
 * returns false when it lost that race (or the resource is gone).
 */
export async function advanceEarliest(t: LogTarget, from: number, to: number, count: number, bytes: number): Promise<boolean> {
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: tableName('meta'),
        Key: metaKeys.resource(t.namespace, t.kind, t.name),
        UpdateExpression: 'SET #e = :to ADD message_count :n, #bytes :b',
        ConditionExpression: 'id = :id AND #e = :from',
        ExpressionAttributeNames: { '#e': EARLIEST_POSITION[t.kind] as string, '#bytes': 'bytes' },
        ExpressionAttributeValues: { ':to': to, ':from': from, ':n': -count, ':b': -bytes, ':id': t.id },
      }),
    );
    return true;
  } catch (e) {
    if (isConditionFailed(e)) return false;
    throw e;
  }
}
