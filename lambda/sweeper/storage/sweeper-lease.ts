/**
 * The sweeper's lease: "one sweep at a time" across Lambda containers, without reserved
 * concurrency (which a new account's concurrency quota of 10 refuses).
 *
 * One item in the meta table (`metaKeys.sweeperLease`) names the sweep that holds it and when the
 * hold ends. A sweep takes it with one conditional PutItem that succeeds only when no lease exists
 * or the last one has expired: DynamoDB applies conditional writes to one item one at a time, so of
 * two sweeps that start together exactly one gets it. The holder deletes it when done (only if it
 * still names the holder); a holder that crashed or timed out simply lets it expire.
 *
 * The expiry is the end of the holder's invocation (its remaining time) plus a margin for clock
 * skew between containers: a sweep cannot outlive its Lambda timeout, so a lease that has
 * expired is never held by a running sweep.
 */
import { DeleteCommand, PutCommand, type DeleteCommandInput, type PutCommandInput } from '@aws-sdk/lib-dynamodb';
import { ddb, isConditionFailed, tableName } from '../../core/storage/client';
import { metaKeys } from '../../core/storage/keys';

/** Who holds the lease and until when (epoch ms). */
interface LeaseHolder {
  owner: string;
  expiresAt: number;
}

export type LeaseAttempt = { acquired: true } | { acquired: false; holder?: LeaseHolder };

/**
 * The PutItem that takes the lease for `owner` until `until` (epoch ms), unless another holder's
 * lease is still running at `now`.
 */
function acquireLeaseParams(owner: string, now: number, until: number, table = tableName('meta')): PutCommandInput {
  return {
    TableName: table,
    Item: { ...metaKeys.sweeperLease(), owner, acquired_at: now, expires_at: until },
    ConditionExpression: 'attribute_not_exists(pk) OR expires_at <= :now',
    ExpressionAttributeValues: { ':now': now },
    // The current holder comes back with a refusal, for the log line; no extra read.
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  };
}

/** Takes the lease, or answers who holds it. One DynamoDB call. */
export async function acquireLease(owner: string, now: number, until: number): Promise<LeaseAttempt> {
  try {
    await ddb().send(new PutCommand(acquireLeaseParams(owner, now, until)));
    return { acquired: true };
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
    const item = (e as { Item?: Record<string, unknown> }).Item;
    return { acquired: false, holder: holderOf(item) };
  }
}

/** The DeleteItem that gives the lease back, only while `owner` still holds it. */
function releaseLeaseParams(owner: string, table = tableName('meta')): DeleteCommandInput {
  return {
    TableName: table,
    Key: metaKeys.sweeperLease(),
    // OWNER is a DynamoDB reserved word.
    ConditionExpression: '#owner = :owner',
    ExpressionAttributeNames: { '#owner': 'owner' },
    ExpressionAttributeValues: { ':owner': owner },
  };
}

/**
 * Gives the lease back so the next sweep need not wait for the expiry. A lease that expired and
 * was taken over meanwhile is left to its new holder.
 */
export async function releaseLease(owner: string): Promise<void> {
  try {
    await ddb().send(new DeleteCommand(releaseLeaseParams(owner)));
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
  }
}

function holderOf(item: Record<string, unknown> | undefined): LeaseHolder | undefined {
  if (!item) return undefined;
  // A refusal's Item is in the low-level attribute-value format (the document client does not
  // unmarshall errors).
  const value = (a: unknown) => (a && typeof a === 'object' ? Object.values(a as Record<string, unknown>)[0] : a);
  const owner = value(item.owner);
  const expiresAt = Number(value(item.expires_at));
  return typeof owner === 'string' && Number.isFinite(expiresAt) ? { owner, expiresAt } : undefined;
}
