/**
 * Endpoint health on the webhook's own item (attribute `health`, lambda/webhooks/rules/endpoint-health.ts).
 * Every write is conditional on the incarnation (`id`), so health never lands on a webhook
 * recreated under the same name, and bumps `version`, so a PUT or PATCH that read the item before
 * builds again on it (lambda/webhooks/operations.ts) instead of writing the health away.
 *
 * Writes happen only when health changes: a healthy webhook's deliveries write nothing here.
 * - open: the first failed attempt after a success (1 WCU of the webhook's item, once per run);
 * - probe: each attempt while failing takes the circuit's lease (1 WCU), one at a time, and renews
 *   it (1 WCU) when its reads ended too late for the hold it took;
 * - final failure: one count per delivery that ended in failure (1 WCU);
 * - disable: once, when the rules say so, with its pending event (a 2-item transaction, about 4 WCU);
 * - clear: the first success after failures (1 WCU);
 * - restart: a run that would disable but met a success it did not see (1 WCU, rare).
 */
import { DeleteCommand, GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { HEALTH_FIELDS, probeHoldMs, type EndpointHealth, type HealthField, type NamespaceHealthDefaults } from '../rules/endpoint-health';
import { ddb, isConditionFailed, tableName, transactWrite } from '../../core/storage/client';
import { withRetries } from '../../core/rules/dependency-errors';
import { metaKeys } from '../../core/storage/keys';

const keyOf = (ns: string, name: string) => metaKeys.resource(ns, 'WEBHOOK', name);
const BUMP = 'version = if_not_exists(version, :zero) + :one';

/**
 * A plain write to an item that a transaction holds (a disable's, below) fails with
 * TransactionConflictException, writing nothing
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-conflict-handling);
 * the transaction ends within milliseconds, so the write is sent again (5 tries, 20 ms doubling:
 * about 0.3 s) rather than failing the job, which SQS would then hold for its visibility (6 min).
 */
const CONFLICT_RETRIES = { tries: 5, firstDelayMs: 20, retryIf: (e: unknown) => (e as { name?: string })?.name === 'TransactionConflictException' };

async function conditional(input: ConstructorParameters<typeof UpdateCommand>[0]): Promise<Record<string, unknown> | undefined> {
  try {
    const out = await withRetries(() => ddb().send(new UpdateCommand(input)), CONFLICT_RETRIES);
    return out.Attributes ?? {};
  } catch (e) {
    if (isConditionFailed(e)) return undefined;
    throw e;
  }
}

export interface HealthTarget {
  namespace: string;
  name: string;
  id: string;
}

/**
 * Starts tracking a run of failures (the run's first failed attempt); false when a run was
 * tracked already. The circuit opens later, at CIRCUIT_TRIP_ATTEMPTS failed attempts.
 */
export async function openCircuit(w: HealthTarget, now: number, error: string): Promise<boolean> {
  return Boolean(
    await conditional({
      TableName: tableName('meta'),
      Key: keyOf(w.namespace, w.name),
      UpdateExpression: `SET health = :h, ${BUMP}`,
      ConditionExpression: 'id = :id AND attribute_not_exists(health)',
      ExpressionAttributeValues: { ':h': { failing_since: now, failures: 0, failed_attempts: 1, probe_until: now + probeHoldMs(0, 0), last_error: error.slice(0, 1024) } satisfies EndpointHealth, ':id': w.id, ':zero': 0, ':one': 1 },
    }),
  );
}

/**
 * Takes the circuit's probe lease until `until` if no probe holds it now; false when another
 * probe holds it (or the circuit closed, or the webhook was disabled, meanwhile). With
 * `ticketDue` (a delivery that was never parked), not either while the parked deliveries' ticket
 * is noted with its due time in that window (../rules/endpoint-health.ts `ticketDueWindow`):
 * the probe is the ticket's. Judged in the condition, on the item as it is, not on the batch's read.
 */
export async function takeProbe(w: HealthTarget, now: number, until: number, ticketDue?: { from: number; to: number }): Promise<boolean> {
  const notTicket = ticketDue ? ' AND (attribute_not_exists(health.ticket_at) OR attribute_not_exists(health.ticket_due) OR NOT (health.ticket_due BETWEEN :from AND :to))' : '';
  return Boolean(
    await conditional({
      TableName: tableName('meta'),
      Key: keyOf(w.namespace, w.name),
      UpdateExpression: `SET health.probe_until = :until, ${BUMP}`,
      ConditionExpression: `id = :id AND attribute_exists(health) AND attribute_not_exists(health.disabled_at) AND (attribute_not_exists(health.probe_until) OR health.probe_until <= :now)${notTicket}`,
      ExpressionAttributeValues: { ':until': until, ':now': now, ':id': w.id, ':zero': 0, ':one': 1, ...(ticketDue ? { ':from': ticketDue.from, ':to': ticketDue.to } : {}) },
    }),
  );
}

/**
 * Moves the probe's hold to `until` while it is still the one taken (`mine`, the `probe_until` its
 * take wrote); false when it is not (another write moved it, the circuit closed, the webhook was
 * disabled or recreated). For a probe whose reads ended too late for its request to end within
 * the hold it took (../endpoint-limits.ts): 1 WCU, only then.
 */
export async function renewProbe(w: HealthTarget, mine: number, until: number): Promise<boolean> {
  return Boolean(
    await conditional({
      TableName: tableName('meta'),
      Key: keyOf(w.namespace, w.name),
      UpdateExpression: `SET health.probe_until = :until, ${BUMP}`,
      ConditionExpression: 'id = :id AND attribute_exists(health) AND attribute_not_exists(health.disabled_at) AND health.probe_until = :mine',
      ExpressionAttributeValues: { ':until': until, ':mine': mine, ':id': w.id, ':zero': 0, ':one': 1 },
    }),
  );
}

/**
 * After a failed attempt while a run is tracked: counts it, and the next probe (once the circuit
 * is open) may go at `until` (sooner than the hold taken for the request's timeout).
 */
export async function probeEnded(w: HealthTarget, until: number): Promise<void> {
  await conditional({
    TableName: tableName('meta'),
    Key: keyOf(w.namespace, w.name),
    UpdateExpression: `SET health.probe_until = :until, health.failed_attempts = if_not_exists(health.failed_attempts, :zero) + :one, ${BUMP}`,
    ConditionExpression: 'id = :id AND attribute_exists(health)',
    ExpressionAttributeValues: { ':until': until, ':id': w.id, ':zero': 0, ':one': 1 },
  });
}

/**
 * Counts a delivery that ended in failure; returns the health after it (undefined when the
 * webhook is gone or was recreated). Opens the circuit first if it was closed.
 */
export async function countFinalFailure(w: HealthTarget, now: number, error: string): Promise<EndpointHealth | undefined> {
  for (let round = 0; round < 2; round++) {
    const out = await conditional({
      TableName: tableName('meta'),
      Key: keyOf(w.namespace, w.name),
      UpdateExpression: `SET health.failures = if_not_exists(health.failures, :zero) + :one, health.last_error = :err, ${BUMP}`,
      ConditionExpression: 'id = :id AND attribute_exists(health)',
      ExpressionAttributeValues: { ':err': error.slice(0, 1024), ':id': w.id, ':zero': 0, ':one': 1 },
      ReturnValues: 'ALL_NEW',
    });
    if (out) return out.health as EndpointHealth;
    // Closed meanwhile (a success), or never opened (a delivery that made no attempt): open it.
    await openCircuit(w, now, error);
  }
  return undefined;
}

/**
 * Restarts the stored run `failingSince` after a success it did not see (the success's batch read
 * the webhook before the run began, so it closed nothing): the run now starts after that success
 * with this one failure (and one failed attempt: the circuit closed with the success). Conditional on the stored run, so a run another call restarted, closed or
 * disabled meanwhile is left alone. Returns the health after it, undefined when the run changed.
 */
export async function restartRun(w: HealthTarget, failingSince: number, since: number): Promise<EndpointHealth | undefined> {
  const out = await conditional({
    TableName: tableName('meta'),
    Key: keyOf(w.namespace, w.name),
    UpdateExpression: `SET health.failing_since = :since, health.failures = :one, health.failed_attempts = :one, ${BUMP}`,
    ConditionExpression: 'id = :id AND health.failing_since = :fs AND attribute_not_exists(health.disabled_at)',
    ExpressionAttributeValues: { ':since': since, ':fs': failingSince, ':id': w.id, ':zero': 0, ':one': 1 },
    ReturnValues: 'ALL_NEW',
  });
  return out?.health as EndpointHealth | undefined;
}

/** A `webhooks/disabled` event waiting to be published (its message id fixed, so a retry publishes the same message). */
export interface PendingDisabledEvent {
  namespace: string;
  webhook_id: string;
  event_id: string;
  /** The event's JSON payload. */
  payload: string;
  /** Epoch ms of the disable. */
  created_at: number;
}

/**
 * Disables the webhook for health; true for the one call that did. The same transaction stores
 * the `webhooks/disabled` event as pending, so the event survives a failed publish or a crash
 * before it (the caller publishes it and then calls {@link eventPublished}; the sweeper publishes
 * what is left, {@link pendingDisabledEvents}). 2 items: about 4 WCU, once per disable.
 * Conditional on the run judged (`failingSince`) still being the stored one: a judgement made on
 * a read of the webhook that a re-enable, a success or a restart has since replaced (the run
 * closed, and perhaps a new one began) disables nothing.
 */
export async function disableForHealth(w: HealthTarget, failingSince: number, now: number, event: { event_id: string; payload: string }): Promise<boolean> {
  const pending: PendingDisabledEvent = { namespace: w.namespace, webhook_id: w.id, event_id: event.event_id, payload: event.payload, created_at: now };
  // AWS cancels a transaction that overlaps another on one of its items (TransactionConflict,
  // https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-conflict-handling):
  // nothing was written, so transactWrite sends it again.
  try {
    await transactWrite({
      TransactItems: [
        {
          Update: {
            TableName: tableName('meta'),
            Key: keyOf(w.namespace, w.name),
            UpdateExpression: `SET health.disabled_at = :now, ${BUMP}`,
            ConditionExpression: 'id = :id AND health.failing_since = :judged AND attribute_not_exists(health.disabled_at)',
            ExpressionAttributeValues: { ':now': now, ':judged': failingSince, ':id': w.id, ':zero': 0, ':one': 1 },
          },
        },
        // Its own item per disable (keyed by the event id): a second disable before the first
        // event was published must not overwrite it.
        {
          Put: {
            TableName: tableName('meta'),
            Item: { ...metaKeys.pendingWebhookEvent(w.namespace, w.id, event.event_id), ...pending },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
      ],
    });
    return true;
  } catch (e) {
    if (isConditionFailed(e)) return false;
    throw e;
  }
}

/** The event was published: forget it (only this event: a later disable's event stays). */
export async function eventPublished(ns: string, webhookId: string, eventId: string): Promise<void> {
  await conditionalDelete(ns, webhookId, eventId);
}

async function conditionalDelete(ns: string, webhookId: string, eventId: string): Promise<void> {
  // The event's own item, and the one-per-webhook item of events stored before (only if it is this event).
  const keys = [metaKeys.pendingWebhookEvent(ns, webhookId, eventId), metaKeys.legacyPendingWebhookEvent(ns, webhookId)];
  await Promise.all(
    keys.map(async (Key) => {
      try {
        await ddb().send(new DeleteCommand({ TableName: tableName('meta'), Key, ConditionExpression: 'event_id = :e', ExpressionAttributeValues: { ':e': eventId } }));
      } catch (e) {
        if (!isConditionFailed(e)) throw e;
      }
    }),
  );
}

/**
 * Events still pending that were stored at or before `before` (older ones first, at most `limit`):
 * the sweeper publishes them. One Query of one small partition.
 */
export async function pendingDisabledEvents(before: number, limit = 100): Promise<PendingDisabledEvent[]> {
  const out = await ddb().send(
    new QueryCommand({
      TableName: tableName('meta'),
      KeyConditionExpression: 'pk = :pk',
      FilterExpression: 'created_at <= :before',
      ExpressionAttributeValues: { ':pk': metaKeys.pendingWebhookEventsPk, ':before': before },
      Limit: limit,
    }),
  );
  return (out.Items ?? []).map((i) => ({ namespace: i.namespace, webhook_id: i.webhook_id, event_id: i.event_id, payload: i.payload, created_at: i.created_at }));
}

/**
 * Closes the circuit after a success (unless health disabled the webhook meanwhile). Answers the
 * run it closed (its `ticket_at` says whether deliveries were parked behind it), or undefined when
 * there was none to close. `UPDATED_OLD` returns the removed `health` with the write itself
 * (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateItem.html#DDB-UpdateItem-request-ReturnValues).
 */
export async function closeCircuit(w: HealthTarget): Promise<EndpointHealth | undefined> {
  const old = await conditional({
    TableName: tableName('meta'),
    Key: keyOf(w.namespace, w.name),
    UpdateExpression: `REMOVE health SET ${BUMP}`,
    ConditionExpression: 'id = :id AND attribute_exists(health) AND attribute_not_exists(health.disabled_at)',
    ExpressionAttributeValues: { ':id': w.id, ':zero': 0, ':one': 1 },
    ReturnValues: 'UPDATED_OLD',
  });
  return old ? ((old.health as EndpointHealth | undefined) ?? { failing_since: 0 }) : undefined;
}

/** The namespace item's attribute of a health threshold default. */
const defaultAttribute = (f: HealthField) => `webhook_${f}`;

/**
 * The health thresholds a namespace sets for its webhooks (those it does not set are absent).
 * One GetItem of the namespace item, projected to the two attributes: strongly consistent (1 RCU),
 * as the admin CLI shows what it has just set and webhooks answer with it at once.
 */
export async function namespaceHealthDefaults(ns: string): Promise<NamespaceHealthDefaults> {
  const out = await ddb().send(
    new GetCommand({
      TableName: tableName('meta'),
      Key: metaKeys.namespace(ns),
      ConsistentRead: true,
      ProjectionExpression: HEALTH_FIELDS.map((_, i) => `#a${i}`).join(', '),
      ExpressionAttributeNames: Object.fromEntries(HEALTH_FIELDS.map((f, i) => [`#a${i}`, defaultAttribute(f)])),
    }),
  );
  const d: NamespaceHealthDefaults = {};
  for (const f of HEALTH_FIELDS) {
    const v = out.Item?.[defaultAttribute(f)];
    if (typeof v === 'number') d[f] = v;
  }
  return d;
}

/** Sets (or with null removes) a namespace's default of one health threshold (admin CLI); false when the namespace does not exist. */
export async function setNamespaceHealthDefault(ns: string, field: HealthField, value: number | null): Promise<boolean> {
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: tableName('meta'),
        Key: metaKeys.namespace(ns),
        UpdateExpression: value === null ? 'REMOVE #a' : 'SET #a = :v',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { '#a': defaultAttribute(field) },
        ...(value === null ? {} : { ExpressionAttributeValues: { ':v': value } }),
      }),
    );
    return true;
  } catch (e) {
    if (isConditionFailed(e)) return false;
    throw e;
  }
}
