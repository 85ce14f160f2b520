/**
 * DynamoDB's transaction conflicts, which DynamoDB Local never raises: see ./index.ts.
 *
 * AWS ("Transaction conflict handling in DynamoDB",
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-conflict-handling):
 * - a PutItem, UpdateItem or DeleteItem on an item that an ongoing TransactWriteItems includes is
 *   rejected with `TransactionConflictException` (HTTP 400) and writes nothing;
 * - a TransactWriteItems that includes an item of another ongoing TransactWriteItems is cancelled
 *   whole with `TransactionCanceledException`, whose `CancellationReasons` (one per item, in the
 *   request's order) say `TransactionConflict` for that item and `None` for the others;
 * - and "if an item is modified outside of a transaction while the transaction is in progress,
 *   the transaction is canceled" (the launch post,
 *   https://aws.amazon.com/blogs/aws/new-amazon-dynamodb-transactions/): a transaction that meets
 *   a single write in flight on one of its items is cancelled the same way.
 * The SDK retries neither (lambda/core/storage/client.ts marks the single write's retryable).
 *
 * Emulation: one middleware of the low-level client, just inside the SDK's deserializer (so inside
 * its retry loop: each attempt is one request). It reads the serialized request (the operation
 * from `X-Amz-Target`, the keys from the JSON body) and holds each item's key while the request is
 * in flight: a transaction's from send to answer plus `MSG_AWS_HARSH_TX_HOLD_MS` (0 by default; in
 * AWS the window is the transaction's own duration, which the local request only approximates),
 * a single write's from send to answer. A request that meets a hold of the other kind is answered
 * here, as DynamoDB answers it (status, `__type`, `CancellationReasons`), without reaching
 * DynamoDB Local, so the SDK's own deserializer builds the real exception classes.
 *
 * A repeat of a ClientRequestToken: while a request with that token is still in flight here, a
 * TransactWriteItems with the same token is answered `TransactionInProgressException` ("The
 * transaction with the given request token is already in progress",
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html,
 * Errors), as AWS answers it, never reaching DynamoDB Local (which would answer it as done). The
 * SDK retries it as a throttle; AWS's own recovery of the first needs a retry 5 s or more after
 * the first attempt (the exception's "Recommended Settings",
 * https://docs.aws.amazon.com/AWSJavaSDK/latest/javadoc/com/amazonaws/services/dynamodbv2/model/TransactionInProgressException.html),
 * which callers must plan for. Once the first has its answer, a repeat is let through (DynamoDB
 * Local answers an applied token as done, as AWS does for 10 minutes) and does not meet the
 * first's hold (AWS answers it as the same transaction).
 *
 * Not emulated: TransactGetItems (the service does not use it) and BatchWriteItem (the docs name
 * it only as what a TransactGetItems meets). `MSG_AWS_HARSH_TX_CONFLICTS=0` turns this part off.
 */
import { Readable } from 'node:stream';
import type { Pluggable } from '@smithy/types';
import { definitionsByName, keyOf } from './dynamodb';

type AttributeMap = Record<string, unknown>;

/** Whether transaction conflicts are emulated (on unless `MSG_AWS_HARSH_TX_CONFLICTS` is 0/false/no/off). */
export function txConflictsEnabled(env: NodeJS.ProcessEnv): boolean {
  const v = env.MSG_AWS_HARSH_TX_CONFLICTS;
  return v === undefined || v === '' || !/^(0|false|no|off)$/i.test(v);
}

/** How long a transaction's items stay held after its answer, from `MSG_AWS_HARSH_TX_HOLD_MS` (0 by default). */
function txHoldMs(env: NodeJS.ProcessEnv): number {
  const v = env.MSG_AWS_HARSH_TX_HOLD_MS;
  return v !== undefined && /^\d+$/.test(v) ? Number(v) : 0;
}

interface Holder {
  /** A TransactWriteItems (else a single write). */
  tx: boolean;
  /** Its ClientRequestToken: a retry of the same transaction does not conflict with itself. */
  token?: string;
}

const SINGLE_WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem']);
const CONFLICT_MESSAGE = 'Transaction is ongoing for the item';
const IN_PROGRESS_MESSAGE = 'The transaction with the given request token is already in progress.';

/**
 * The conflicts as an SDK plugin on the DynamoDB client. Its holds are the plugin's own: every
 * client given the same plugin (all of one process's, through lambda/core/client-plugins.ts) shares them.
 */
export function transactionConflictPlugin(env: NodeJS.ProcessEnv): Pluggable<any, any> {
  const holdMs = txHoldMs(env);
  const defs = definitionsByName(env);
  const held = new Map<string, Set<Holder>>();
  const itemKey = (table: string, keyOrItem: AttributeMap | undefined): string | undefined => {
    if (!keyOrItem) return undefined;
    const def = defs.get(table);
    // A table this code base does not define: its Key as given (a Put of one is not tracked).
    return `${table}|${def ? keyOf(def, keyOrItem) : JSON.stringify(Object.entries(keyOrItem).sort(([a], [b]) => (a < b ? -1 : 1)))}`;
  };
  const hold = (keys: string[], h: Holder) => {
    for (const k of keys) {
      const set = held.get(k) ?? new Set<Holder>();
      set.add(h);
      held.set(k, set);
    }
  };
  const release = (keys: string[], h: Holder) => {
    for (const k of keys) {
      const set = held.get(k);
      set?.delete(h);
      if (set && !set.size) held.delete(k);
    }
  };
  const holders = (k: string | undefined) => (k ? [...(held.get(k) ?? [])] : []);
  /** ClientRequestTokens of the transactions in flight (send to answer): one request each, a repeat is refused. */
  const tokensInFlight = new Set<string>();

  const middleware = (next: any) => async (args: any) => {
    const request = args.request as { headers?: Record<string, string>; body?: unknown };
    const target = Object.entries(request?.headers ?? {}).find(([n]) => n.toLowerCase() === 'x-amz-target')?.[1] ?? '';
    const operation = target.slice(target.indexOf('.') + 1);
    if (!SINGLE_WRITES.has(operation) && operation !== 'TransactWriteItems') return next(args);
    const body = parse(request.body);
    if (!body) return next(args);

    if (operation !== 'TransactWriteItems') {
      const table = body.TableName as string;
      const key = itemKey(table, operation === 'PutItem' ? (defs.has(table) ? (body.Item as AttributeMap) : undefined) : (body.Key as AttributeMap));
      if (!key) return next(args);
      if (holders(key).some((h) => h.tx)) return { response: errorResponse('TransactionConflictException', { message: CONFLICT_MESSAGE }) };
      const me: Holder = { tx: false };
      hold([key], me);
      try {
        return await next(args);
      } finally {
        release([key], me);
      }
    }

    const token = typeof body.ClientRequestToken === 'string' ? body.ClientRequestToken : undefined;
    if (token !== undefined && tokensInFlight.has(token)) return { response: errorResponse('TransactionInProgressException', { message: IN_PROGRESS_MESSAGE }) };
    const keys = ((body.TransactItems as AttributeMap[]) ?? []).map((t) => {
      const [kind, action] = (Object.entries(t)[0] ?? []) as [string, AttributeMap | undefined];
      if (!action) return undefined;
      const table = action.TableName as string;
      return itemKey(table, kind === 'Put' ? (defs.has(table) ? (action.Item as AttributeMap) : undefined) : (action.Key as AttributeMap));
    });
    const conflicts = keys.map((k) => holders(k).some((h) => !h.tx || h.token === undefined || h.token !== token));
    if (conflicts.some(Boolean)) {
      const codes = conflicts.map((c) => (c ? 'TransactionConflict' : 'None'));
      return {
        response: errorResponse('TransactionCanceledException', {
          Message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${codes.join(', ')}]`,
          CancellationReasons: codes.map((Code) => (Code === 'None' ? { Code } : { Code, Message: CONFLICT_MESSAGE })),
        }),
      };
    }
    const mine = keys.filter((k): k is string => !!k);
    const me: Holder = { tx: true, token };
    hold(mine, me);
    if (token !== undefined) tokensInFlight.add(token);
    try {
      return await next(args);
    } finally {
      if (token !== undefined) tokensInFlight.delete(token);
      if (holdMs > 0) setTimeout(() => release(mine, me), holdMs).unref();
      else release(mine, me);
    }
  };

  return {
    applyToStack: (stack: any) =>
      stack.addRelativeTo(middleware, { relation: 'after', toMiddleware: 'deserializerMiddleware', name: 'awsHarshTransactionConflicts', override: true }),
  };
}

function parse(body: unknown): AttributeMap | undefined {
  try {
    if (typeof body === 'string') return JSON.parse(body) as AttributeMap;
    if (body instanceof Uint8Array) return JSON.parse(new TextDecoder().decode(body)) as AttributeMap;
  } catch {
    // not JSON: not a request this emulation reads
  }
  return undefined;
}

/** DynamoDB's answer for an error in its JSON protocol (AWS JSON 1.0): status 400, `__type` in the body. */
function errorResponse(type: string, fields: AttributeMap) {
  const body = JSON.stringify({ __type: `com.amazonaws.dynamodb.v20120810#${type}`, ...fields });
  return {
    statusCode: 400,
    reason: undefined,
    headers: {
      'content-type': 'application/x-amz-json-1.0',
      'x-amzn-requestid': `harsh-${Math.random().toString(36).slice(2)}`,
      'content-length': String(Buffer.byteLength(body)),
    },
    body: Readable.from([Buffer.from(body)]),
  };
}
