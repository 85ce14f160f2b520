/**
 * Eventually consistent reads of a base table, which DynamoDB Local always answers with the
 * latest write: see ./index.ts.
 *
 * AWS ("DynamoDB read consistency",
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.ReadConsistency.html):
 * "Eventually consistent is the default read consistent model for all read operations. When
 * issuing eventually consistent reads to a DynamoDB table or an index, the responses may not
 * reflect the results of a recently completed write operation." Only `ConsistentRead: true`
 * (GetItem, BatchGetItem per table, Query, Scan) promises "the most up-to-date data, reflecting
 * the updates from all prior write operations that were successful", at twice the read cost.
 *
 * Emulation, one `initialize` middleware of the low-level client (it sees the document client's
 * commands before they are marshalled, and their answers after they are unmarshalled):
 * - Every successful write of a known table (PutItem, UpdateItem, DeleteItem, the Put, Update
 *   and Delete of a TransactWriteItems, BatchWriteItem) is remembered per item with the item's
 *   image before it (absent for a new item). A single write gets it atomically by asking for
 *   `ReturnValues: ALL_OLD` (taken out of the answer again when the caller did not ask for it);
 *   an UpdateItem asking for new values, a transaction and a batch write get it by a consistent
 *   BatchGetItem just before they are sent (two writes of one item at the same moment may then
 *   record a slightly later image: harmless, both are versions the item had).
 * - An eventually consistent read sees each item as it was `MSG_AWS_HARSH_EC_READS` ms ago: an
 *   item written within that lag is answered at its image before the first write of the window
 *   (or as absent). GetItem and BatchGetItem answer that image (a just-deleted item is still
 *   there); Query and Scan of the base table show a recently written item at that image and hide
 *   one created within the lag, refilling a page with a `Limit` from the next items as the table
 *   would (`Select: COUNT` counts the same way).
 * - Not emulated (kinder than AWS, never harsher): a Query or Scan does not bring back an item
 *   deleted within the lag, and its FilterExpression is evaluated on the latest image; reads of a
 *   secondary index are ./dynamodb.ts's; writes by another process (each process remembers its own).
 *
 * On by default (1000 ms); `MSG_AWS_HARSH_EC_READS` sets the lag in ms (0 or off: off; on/true/yes:
 * 1000 ms); see EC_READ_LAG_DEFAULT_MS.
 */
import { BatchGetItemCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import type { Pluggable } from '@smithy/types';
import { config } from '../../lambda/core/config';
import type { TableDefinition } from '../../lambda/core/storage/tables';
import { commandPlugin, definitionsByName, withKeysProjected } from './dynamodb';

type AttributeMap = Record<string, any>;

/**
 * The lag when `MSG_AWS_HARSH_EC_READS` is not set: on, a second (`MSG_AWS_HARSH_EC_READS=0`
 * turns it off; 0 here would make it off by default again).
 */
const EC_READ_LAG_DEFAULT_MS = 1000;

/** The lag of eventually consistent reads in ms, from `MSG_AWS_HARSH_EC_READS` (0: off). */
export function ecReadLagMs(env: NodeJS.ProcessEnv): number {
  const v = env.MSG_AWS_HARSH_EC_READS;
  if (v === undefined || v === '') return EC_READ_LAG_DEFAULT_MS;
  if (/^\d+$/.test(v)) return Number(v);
  return /^(on|true|yes)$/i.test(v) ? 1000 : 0;
}

/** A key attribute's value as text, marshalled (`{S: 'x'}`, `{N: '5'}`) or not. */
const keyText = (v: unknown): string => {
  if (v && typeof v === 'object') {
    const av = v as { S?: string; N?: string };
    return String(av.S ?? av.N ?? JSON.stringify(v));
  }
  return String(v);
};
const isMarshalledKey = (key: AttributeMap) => Object.values(key).some((v) => v !== null && typeof v === 'object');
const keyNamesOf = (def: TableDefinition) => [def.partitionKey.name, ...(def.sortKey ? [def.sortKey.name] : [])];
const idOf = (table: string, def: TableDefinition, item: AttributeMap) => `${table}|${keyNamesOf(def).map((n) => keyText(item[n])).join('|')}`;
const keyOnly = (def: TableDefinition, item: AttributeMap) => Object.fromEntries(keyNamesOf(def).map((n) => [n, item[n]]));

/** An image in the form `marshalled` asks, from the form it was recorded in. */
function inForm(image: AttributeMap, recordedMarshalled: boolean, marshalled: boolean): AttributeMap {
  if (recordedMarshalled === marshalled) return image;
  return marshalled ? marshall(image, { removeUndefinedValues: true, convertClassInstanceToMap: true }) : unmarshall(image as any);
}

/**
 * The attributes of `item` a ProjectionExpression names. Top-level names and map paths (`a.b`)
 * exactly; a path through a list index (`a[0]`) keeps the whole top-level attribute.
 */
export function project(item: AttributeMap, expression: string | undefined, names: Record<string, string> | undefined, marshalled: boolean): AttributeMap {
  if (!expression) return item;
  const out: AttributeMap = {};
  for (const raw of expression.split(',')) {
    const path = raw.trim();
    const segs = (path.includes('[') ? [path.split(/[.[]/)[0]] : path.split('.')).map((s) => names?.[s] ?? s);
    let from: AttributeMap | undefined = item;
    let to = out;
    segs.forEach((seg, i) => {
      if (!from || !(seg in from)) return (from = undefined);
      if (i === segs.length - 1) return (to[seg] = from[seg]);
      const child = from[seg];
      const inner = marshalled ? child?.M : child;
      if (!inner || typeof inner !== 'object') return (from = undefined);
      if (!(seg in to)) to[seg] = marshalled ? { M: {} } : {};
      to = marshalled ? to[seg].M : to[seg];
      from = inner;
    });
  }
  return out;
}

interface Write {
  at: number;
  prev: AttributeMap | undefined;
  marshalled: boolean;
}

/** The writes of the last `lagMs` per item, by table and item id. */
class History {
  private readonly tables = new Map<string, Map<string, Write[]>>();
  constructor(
    private readonly lagMs: number,
    private readonly now: () => number,
  ) {}

  record(table: string, id: string, prev: AttributeMap | undefined, marshalled: boolean) {
    const t = this.now();
    let m = this.tables.get(table);
    if (!m) this.tables.set(table, (m = new Map()));
    if (m.size >= 10_000) this.prune(table, t);
    const w = m.get(id);
    if (w) w.push({ at: t, prev, marshalled });
    else m.set(id, [{ at: t, prev, marshalled }]);
  }

  /** Whether any item of `table` is within the lag (drops what is past it). */
  any(table: string): boolean {
    const m = this.tables.get(table);
    if (!m?.size) return false;
    this.prune(table, this.now());
    return m.size > 0;
  }

  /** The write whose image before it is what an eventually consistent read sees now, if any. */
  stale(table: string, id: string): Write | undefined {
    const ws = this.tables.get(table)?.get(id);
    if (!ws) return undefined;
    const t = this.now();
    while (ws.length && t - ws[0].at >= this.lagMs) ws.shift();
    if (!ws.length) this.tables.get(table)!.delete(id);
    return ws[0];
  }

  private prune(table: string, t: number) {
    const m = this.tables.get(table)!;
    for (const [id, ws] of m) if (t - ws[ws.length - 1].at >= this.lagMs) m.delete(id);
  }
}

/** The items one write command changes: table and key (as the command spells it). */
function writesOf(command: string, input: AttributeMap): { table: string; key: AttributeMap; item?: AttributeMap }[] {
  switch (command) {
    case 'PutItemCommand':
      return [{ table: input.TableName, key: input.Item, item: input.Item }];
    case 'UpdateItemCommand':
    case 'DeleteItemCommand':
      return [{ table: input.TableName, key: input.Key }];
    case 'TransactWriteItemsCommand':
      return ((input.TransactItems ?? []) as AttributeMap[]).flatMap((t) =>
        t.Put ? [{ table: t.Put.TableName, key: t.Put.Item }] : t.Update ? [{ table: t.Update.TableName, key: t.Update.Key }] : t.Delete ? [{ table: t.Delete.TableName, key: t.Delete.Key }] : [],
      );
    case 'BatchWriteItemCommand':
      return Object.entries((input.RequestItems ?? {}) as Record<string, AttributeMap[]>).flatMap(([table, reqs]) =>
        reqs.map((r) => ({ table, key: r.PutRequest?.Item ?? r.DeleteRequest?.Key })),
      );
    default:
      return [];
  }
}

const rawClients = new Map<string, DynamoDBClient>();
/** A client without plugins on the configured endpoint, for the consistent reads before a write. */
function rawClient(): DynamoDBClient {
  const { region, dynamodbEndpoint } = config();
  const k = `${dynamodbEndpoint}|${region}`;
  let c = rawClients.get(k);
  if (!c) {
    c = new DynamoDBClient({ region, ...(dynamodbEndpoint ? { endpoint: dynamodbEndpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}) });
    rawClients.set(k, c);
  }
  return c;
}

/** The current images (marshalled) of some items, read consistently, by item id. */
async function readNow(items: { table: string; def: TableDefinition; key: AttributeMap }[]): Promise<Map<string, AttributeMap>> {
  const out = new Map<string, AttributeMap>();
  const seen = new Set<string>();
  const keys = items.filter((i) => {
    const id = idOf(i.table, i.def, i.key);
    return !seen.has(id) && seen.add(id);
  });
  for (let i = 0; i < keys.length; i += 100) {
    let request: Record<string, { Keys: AttributeMap[]; ConsistentRead: boolean }> | undefined = {};
    for (const k of keys.slice(i, i + 100)) {
      const key = keyOnly(k.def, k.key);
      (request[k.table] ??= { Keys: [], ConsistentRead: true }).Keys.push(isMarshalledKey(key) ? key : marshall(key));
    }
    while (request && Object.keys(request).length) {
      const res = await rawClient().send(new BatchGetItemCommand({ RequestItems: request as any }));
      for (const [table, found] of Object.entries(res.Responses ?? {})) {
        for (const item of found) out.set(idOf(table, items.find((x) => x.table === table)!.def, item), item);
      }
      request = res.UnprocessedKeys as typeof request;
    }
  }
  return out;
}

/**
 * Whether the command's answer is marshalled: false for the document client's commands, whose
 * marshalling middleware marks the context (`DDB_MAPPER`) before it is sent.
 */
const answersMarshalled = (context: any) => context.__aws_sdk_context?.features?.DDB_MAPPER !== 'd';

/** The lag as an SDK plugin on the DynamoDB client. One History per plugin: per process. */
export function ecReadLagPlugin(env: NodeJS.ProcessEnv, now: () => number = Date.now): Pluggable<any, any> {
  const history = new History(ecReadLagMs(env), now);
  const defs = definitionsByName(env);

  /** A write: remember the image each of its items had before it. */
  async function write(command: string, input: AttributeMap, next: any, args: any, context: any) {
    const writes = writesOf(command, input).flatMap((w) => {
      const def = defs.get(w.table);
      return def && w.key ? [{ ...w, def }] : [];
    });
    if (!writes.length) return next(args);
    const single = command !== 'TransactWriteItemsCommand' && command !== 'BatchWriteItemCommand';
    const rv = input.ReturnValues as string | undefined;
    if (single && (!rv || rv === 'NONE' || rv === 'ALL_OLD')) {
      const result = await next({ ...args, input: { ...input, ReturnValues: 'ALL_OLD' } });
      const w = writes[0];
      const marshalled = answersMarshalled(context);
      history.record(w.table, idOf(w.table, w.def, w.key), result.output?.Attributes, marshalled);
      if (rv === 'ALL_OLD') return result;
      const { Attributes: _, ...output } = result.output ?? {};
      return { ...result, output };
    }
    const before = await readNow(writes);
    const result = await next(args);
    const unprocessed = new Set<string>();
    for (const [table, reqs] of Object.entries((result.output?.UnprocessedItems ?? {}) as Record<string, AttributeMap[]>)) {
      const def = defs.get(table);
      if (def) for (const r of reqs) unprocessed.add(idOf(table, def, r.PutRequest?.Item ?? r.DeleteRequest?.Key));
    }
    for (const w of writes) {
      const id = idOf(w.table, w.def, w.key);
      if (!unprocessed.has(id)) history.record(w.table, id, before.get(id), true);
    }
    return result;
  }

  /** An item as an eventually consistent read sees it: undefined for absent, `current` when not stale. */
  function seen(table: string, id: string, current: AttributeMap | undefined, marshalled: boolean, projection?: string, names?: Record<string, string>) {
    const w = history.stale(table, id);
    if (!w) return current;
    return w.prev && project(inForm(w.prev, w.marshalled, marshalled), projection, names, marshalled);
  }

  /** A Query or Scan of the base table (see the header): page loop as ./dynamodb.ts's. */
  async function queryOrScan(input: AttributeMap, def: TableDefinition, next: any, args: any, context: any) {
    const table = input.TableName as string;
    const keyNames = keyNamesOf(def);
    const counting = input.Select === 'COUNT';
    const names = input.ExpressionAttributeNames as Record<string, string> | undefined;
    const { input: asked, strip } = counting
      ? { input: { ...input, Select: undefined, ProjectionExpression: keyNames.map((_, i) => `#awsHarshEc${i}`).join(', '), ExpressionAttributeNames: { ...names, ...Object.fromEntries(keyNames.map((n, i) => [`#awsHarshEc${i}`, n])) } }, strip: (i: AttributeMap) => i }
      : withKeysProjected(input, keyNames);
    const limit = typeof input.Limit === 'number' ? input.Limit : undefined;
    let result = await next({ ...args, input: asked });
    const kept: { key: AttributeMap; item: AttributeMap }[] = [];
    let scanned = 0;
    for (;;) {
      const out = result.output as AttributeMap;
      scanned += out.ScannedCount ?? 0;
      const page = (out.Items ?? []) as AttributeMap[];
      const marshalled = answersMarshalled(context);
      let lost = false;
      for (const i of page) {
        const v = seen(table, idOf(table, def, i), strip(i), marshalled, input.ProjectionExpression, names);
        if (v) kept.push({ key: keyOnly(def, i), item: v });
        else lost = true;
      }
      if (!lost || limit === undefined || kept.length >= limit || !out.LastEvaluatedKey) {
        const page2 = limit !== undefined ? kept.slice(0, limit) : kept;
        // A page that reached its Limit continues after its last item shown, as the table would.
        const lastKey = limit !== undefined && kept.length >= limit ? page2[page2.length - 1].key : out.LastEvaluatedKey;
        const output: AttributeMap = { ...out, Count: page2.length, ScannedCount: scanned };
        if (counting) delete output.Items;
        else output.Items = page2.map((k) => k.item);
        if (lastKey) output.LastEvaluatedKey = lastKey;
        else delete output.LastEvaluatedKey;
        return { ...result, output };
      }
      result = await next({ ...args, input: { ...asked, ExclusiveStartKey: out.LastEvaluatedKey } });
    }
  }

  /** A BatchGetItem: the eventually consistent tables' items as they were. */
  async function batchGet(input: AttributeMap, next: any, args: any, context: any) {
    const lagged = Object.entries((input.RequestItems ?? {}) as Record<string, AttributeMap>).filter(
      ([table, req]) => !req.ConsistentRead && defs.has(table) && history.any(table),
    );
    if (!lagged.length) return next(args);
    const requestItems = { ...input.RequestItems };
    const strips = new Map<string, (i: AttributeMap) => AttributeMap>();
    for (const [table, req] of lagged) {
      const { input: asked, strip } = withKeysProjected(req, keyNamesOf(defs.get(table)!));
      requestItems[table] = asked;
      strips.set(table, strip);
    }
    const result = await next({ ...args, input: { ...input, RequestItems: requestItems } });
    const responses = { ...(result.output?.Responses ?? {}) } as Record<string, AttributeMap[]>;
    for (const [table, req] of lagged) {
      const def = defs.get(table)!;
      const marshalled = answersMarshalled(context);
      const found = new Set<string>();
      const items: AttributeMap[] = [];
      for (const i of responses[table] ?? []) {
        const id = idOf(table, def, i);
        found.add(id);
        const v = seen(table, id, strips.get(table)!(i), marshalled, req.ProjectionExpression, req.ExpressionAttributeNames);
        if (v) items.push(v);
      }
      const unprocessed = new Set(((result.output?.UnprocessedKeys?.[table]?.Keys ?? []) as AttributeMap[]).map((k) => idOf(table, def, k)));
      for (const k of req.Keys as AttributeMap[]) {
        const id = idOf(table, def, k);
        if (found.has(id) || unprocessed.has(id)) continue;
        found.add(id);
        const v = seen(table, id, undefined, marshalled, req.ProjectionExpression, req.ExpressionAttributeNames);
        if (v) items.push(v);
      }
      responses[table] = items;
    }
    return { ...result, output: { ...result.output, Responses: responses } };
  }

  return commandPlugin('awsHarshEcReads', async (command, input, next, args, context) => {
    if (command === 'GetItemCommand' && !input.ConsistentRead && defs.has(input.TableName)) {
      const def = defs.get(input.TableName)!;
      const result = await next(args);
      const marshalled = answersMarshalled(context);
      const item = seen(input.TableName, idOf(input.TableName, def, input.Key), result.output?.Item, marshalled, input.ProjectionExpression, input.ExpressionAttributeNames);
      const { Item: _, ...output } = result.output ?? {};
      return { ...result, output: item ? { ...output, Item: item } : output };
    }
    if ((command === 'QueryCommand' || command === 'ScanCommand') && !input.ConsistentRead && !input.IndexName && defs.has(input.TableName) && history.any(input.TableName)) {
      return queryOrScan(input, defs.get(input.TableName)!, next, args, context);
    }
    if (command === 'BatchGetItemCommand') return batchGet(input, next, args, context);
    return write(command, input, next, args, context);
  });
}

export function harshEcReadPlugins(env: NodeJS.ProcessEnv): Pluggable<any, any>[] {
  return ecReadLagMs(env) > 0 ? [ecReadLagPlugin(env)] : [];
}
