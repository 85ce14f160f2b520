/**
 * Deliveries parked behind a webhook's open circuit (lambda/webhooks/parking.ts): one small item per
 * delivery in the webhook incarnation's own partition, sorted by when it was parked, so the probe
 * goes to the oldest (a Query with Limit 1) and the release reads them in order. A parked delivery
 * costs one PutItem (1 WCU for a reference job; an inline job's item is as large as its message)
 * and a one-item delete transaction (2 WCU) when it leaves, instead of an SQS send and receive per probe gap.
 *
 * The probe's ticket (one SQS message per webhook that comes back at the probe's time) is noted on
 * the webhook's health (`health.ticket_at`), so one is sent per run, not one per parked delivery.
 */
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { jobMessageId, type DeliveryJob } from '../rules/delivery';
import { ddb, isConditionFailed, tableName, transactWrite } from '../../core/storage/client';
import { metaKeys } from '../../core/storage/keys';

const parkedKeys = {
  pk: (ns: string, webhookId: string) => `NS#${ns}#WHPARK#${webhookId}`,
  /** Oldest first: the park time, zero-padded, then the delivery (a replay is a delivery of its own). */
  sk: (job: DeliveryJob & { parked_at: number }) => `${String(job.parked_at).padStart(15, '0')}#${jobMessageId(job)}#${job.replay_id ?? ''}`,
};

export type ParkedJob = DeliveryJob & { parked_at: number };

/** Parks a job (idempotent: a job parked again keeps its place, its `parked_at`). */
export async function putParked(job: ParkedJob): Promise<void> {
  await ddb().send(new PutCommand({ TableName: tableName('meta'), Item: { pk: parkedKeys.pk(job.namespace, job.webhook_id), sk: parkedKeys.sk(job), job: JSON.stringify(job) } }));
}

/** The oldest parked jobs of a webhook incarnation (strongly consistent: a job parked just before is seen). */
export async function parkedJobs(ns: string, webhookId: string, limit: number, after?: Record<string, unknown>): Promise<{ jobs: ParkedJob[]; next?: Record<string, unknown> }> {
  const out = await ddb().send(
    new QueryCommand({
      TableName: tableName('meta'),
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': parkedKeys.pk(ns, webhookId) },
      ConsistentRead: true,
      Limit: limit,
      ...(after ? { ExclusiveStartKey: after } : {}),
    }),
  );
  return { jobs: (out.Items ?? []).map((i) => JSON.parse(i.job as string) as ParkedJob), next: out.LastEvaluatedKey };
}

/**
 * Unparks one job; false when it was not parked (another release took it). A one-item transaction
 * with a ClientRequestToken, not a DeleteItem: when DynamoDB applied the delete and its answer was
 * lost, the SDK's retry of a DeleteItem met its own delete, failed its condition, and the job was
 * neither parked nor handed on (lost); a repeated token is not applied again and answers success
 * (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html#DDB-TransactWriteItems-request-ClientRequestToken).
 * Two write units instead of one, only while a circuit is open.
 */
export async function takeParked(job: ParkedJob): Promise<boolean> {
  try {
    await transactWrite({ TransactItems: [{ Delete: { TableName: tableName('meta'), Key: { pk: parkedKeys.pk(job.namespace, job.webhook_id), sk: parkedKeys.sk(job) }, ConditionExpression: 'attribute_exists(pk)' } }] });
    return true;
  } catch (e) {
    if (isConditionFailed(e)) return false;
    throw e;
  }
}

/** Whether the job is still parked (strongly consistent): after a take that threw, which DynamoDB may have applied. */
export async function stillParked(job: ParkedJob): Promise<boolean> {
  const out = await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: { pk: parkedKeys.pk(job.namespace, job.webhook_id), sk: parkedKeys.sk(job) }, ConsistentRead: true, ProjectionExpression: 'pk' }));
  return Boolean(out.Item);
}

/** What {@link claimTicket} found: the ticket is this call's to send, or another holds it, or the run ended. */
export type TicketClaim = 'claimed' | 'held' | 'closed' | 'disabled';

/**
 * How long a ticket noted but not yet confirmed sent ({@link ticketSent}) holds the note: a claim
 * whose send failed and whose give-back failed too left a note with no ticket on its way, and every
 * later park took it for one until it was stale (about 23 minutes). The claim, the send (with the
 * SDK's retries) and the confirmation take well under this; a note that lapses while its send
 * still runs lets a second ticket go, which finds the note moved on and stops.
 */
const UNSENT_TICKET_MS = 15_000;

/**
 * Notes the webhook's probe ticket as sent at `now`, to come back at `due`, when none is (or the one noted is older than
 * `staleBefore`: its message was lost, or it was never confirmed sent within {@link UNSENT_TICKET_MS}). With `held` (a ticket carrying on), when the noted ticket
 * is still `held`, or none is: the ticket's run closed and a new run began with no ticket out, so
 * what is still parked (a release at the close that failed) is this ticket's to carry on; nothing
 * else would come back for it until a delivery of the new run parks. On a refusal, the item as it was
 * (`ReturnValuesOnConditionCheckFailure: 'ALL_OLD'`,
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateItem.html) says why
 * without a second read: the circuit closed, health disabled it, or another ticket is out.
 */
export async function claimTicket(w: { namespace: string; name: string; id: string }, now: number, staleBefore: number, due: number, held?: number): Promise<TicketClaim> {
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: tableName('meta'),
        Key: metaKeys.resource(w.namespace, 'WEBHOOK', w.name),
        UpdateExpression: 'SET health.ticket_at = :now, health.ticket_unsent = :unsent, health.ticket_due = :due',
        ConditionExpression:
          'id = :id AND attribute_exists(health) AND attribute_not_exists(health.disabled_at) AND ' +
          (held === undefined
            ? '(attribute_not_exists(health.ticket_at) OR health.ticket_at < :stale OR health.ticket_unsent < :now)'
            : '(attribute_not_exists(health.ticket_at) OR health.ticket_at = :held)'),
        ExpressionAttributeValues: { ':now': now, ':unsent': now + UNSENT_TICKET_MS, ':due': due, ':id': w.id, ...(held === undefined ? { ':stale': staleBefore } : { ':held': held }) },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return 'claimed';
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
    // A refusal's Item is in the low-level attribute-value format (the document client does not
    // unmarshall errors): `{ id: { S } , health: { M: { disabled_at: { N } } } }`.
    const old = (e as { Item?: { id?: { S?: string }; health?: { M?: Record<string, unknown> } } }).Item;
    const h = old?.health?.M;
    if (!old || old.id?.S !== w.id || !h) return 'closed';
    if (h.disabled_at !== undefined) return 'disabled';
    return 'held';
  }
}

/** The ticket noted at `at` was sent: its note holds until the ticket comes back or is stale. Never throws (unconfirmed, it lapses). */
export async function ticketSent(w: { namespace: string; name: string; id: string }, at: number): Promise<void> {
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: tableName('meta'),
        Key: metaKeys.resource(w.namespace, 'WEBHOOK', w.name),
        UpdateExpression: 'REMOVE health.ticket_unsent',
        ConditionExpression: 'id = :id AND health.ticket_at = :at',
        ExpressionAttributeValues: { ':id': w.id, ':at': at },
      }),
    );
  } catch {
    // Moved on (another ticket, or the run ended), or not written: the note lapses in UNSENT_TICKET_MS.
  }
}

/** Gives the ticket `held` up (the parked deliveries are gone); false when the run moved on meanwhile. */
export async function dropTicket(w: { namespace: string; name: string; id: string }, held: number): Promise<boolean> {
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: tableName('meta'),
        Key: metaKeys.resource(w.namespace, 'WEBHOOK', w.name),
        UpdateExpression: 'REMOVE health.ticket_at, health.ticket_due',
        ConditionExpression: 'id = :id AND health.ticket_at = :held',
        ExpressionAttributeValues: { ':id': w.id, ':held': held },
      }),
    );
    return true;
  } catch (e) {
    if (isConditionFailed(e)) return false;
    throw e;
  }
}
