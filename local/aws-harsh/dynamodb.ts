/**
 * DynamoDB as AWS runs it, where DynamoDB Local is kinder: see ./index.ts.
 *
 * Global secondary indexes lag. In AWS a GSI is updated asynchronously and only supports
 * eventually consistent reads ("changes to the table data are propagated to the global secondary
 * indexes within a fraction of a second, under normal conditions"; `ConsistentRead: true` on a
 * GSI is a ValidationException):
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.Reads
 * DynamoDB Local updates its indexes with the write, so a test that writes and then lists through
 * an index passes locally and can fail in AWS.
 *
 * This plugin (an `initialize` middleware of the low-level client: it sees the document client's
 * commands before they are marshalled) makes the index lag: an item put in the last `MSG_AWS_HARSH_GSI_LAG_MS` (1000 by
 * default) is left out of every Query and Scan of a global secondary index (never of the base
 * table or a local secondary index: their eventually consistent reads are ./dynamodb-reads.ts's). A page that loses items to the
 * lag is completed from the next ones, as an index that did not hold them would have been read
 * (`Limit` counts what the index holds). It also refuses `ConsistentRead: true` on a GSI, as AWS
 * does.
 *
 * Only puts (PutItem, the Put of a transaction or a batch write) start the lag: an update of an
 * item the index already held would show its old version in AWS, which no middleware can give
 * back, and hiding it would be harsher than AWS.
 */
import type { Pluggable } from '@smithy/types';
import { TABLES, type TableDefinition } from '../../lambda/core/storage/tables';

type AttributeMap = Record<string, unknown>;

/** How long a put stays out of the indexes, from `MSG_AWS_HARSH_GSI_LAG_MS` (0 turns it off). */
export function gsiLagMs(env: NodeJS.ProcessEnv): number {
  const v = env.MSG_AWS_HARSH_GSI_LAG_MS;
  return v !== undefined && /^\d+$/.test(v) ? Number(v) : 1000;
}

/** Table definitions by every name a table can have here (its local name, its env var's value). */
export function definitionsByName(env: NodeJS.ProcessEnv): Map<string, TableDefinition> {
  const out = new Map<string, TableDefinition>();
  for (const t of Object.values(TABLES) as TableDefinition[]) {
    out.set(t.localName, t);
    const named = env[t.envVar];
    if (named) out.set(named, t);
  }
  return out;
}

/**
 * A key attribute's value, whether marshalled (`{S: 'x'}`, a command of the low-level client) or
 * not (the document client's, which marshals after this middleware runs).
 */
function plain(v: unknown): unknown {
  if (v && typeof v === 'object') {
    const av = v as { S?: string; N?: string; B?: unknown };
    return av.S ?? av.N ?? av.B ?? v;
  }
  return v;
}

/** The item's primary key as one string. */
export function keyOf(def: TableDefinition, item: AttributeMap): string {
  return JSON.stringify([plain(item[def.partitionKey.name]), def.sortKey ? plain(item[def.sortKey.name]) : null]);
}

/** Puts of one command: table name and item, for each. */
function putsOf(command: string, input: AttributeMap): { table: string; item: AttributeMap }[] {
  if (command === 'PutItemCommand') return [{ table: input.TableName as string, item: input.Item as AttributeMap }];
  if (command === 'TransactWriteItemsCommand') {
    return ((input.TransactItems as { Put?: { TableName: string; Item: AttributeMap } }[]) ?? [])
      .filter((t) => t.Put)
      .map((t) => ({ table: t.Put!.TableName, item: t.Put!.Item }));
  }
  if (command === 'BatchWriteItemCommand') {
    return Object.entries((input.RequestItems as Record<string, { PutRequest?: { Item: AttributeMap } }[]>) ?? {}).flatMap(([table, reqs]) =>
      reqs.filter((r) => r.PutRequest).map((r) => ({ table, item: r.PutRequest!.Item })),
    );
  }
  return [];
}

/**
 * The lag as an SDK plugin on the DynamoDB client: one middleware records puts, the same one
 * filters index reads.
 */
function gsiLagPlugin(env: NodeJS.ProcessEnv, now: () => number = Date.now): Pluggable<any, any> {
  const lagMs = gsiLagMs(env);
  const defs = definitionsByName(env);
  /** When each recently put item was put, by table and key. */
  const putAt = new Map<string, number>();
  const forget = (t: number) => {
    if (putAt.size < 10_000) return;
    for (const [k, at] of putAt) if (t - at >= lagMs) putAt.delete(k);
  };
  const isGlobalIndex = (table: string, index: unknown) =>
    typeof index === 'string' && (defs.get(table)?.globalIndexes ?? []).some((g) => g.indexName === index);

  return commandPlugin('awsHarshGsiLag', async (command, input, next, args) => {
    if ((command === 'QueryCommand' || command === 'ScanCommand') && isGlobalIndex(input.TableName as string, input.IndexName)) {
      if (input.ConsistentRead) {
        throw Object.assign(new Error('Consistent reads are not supported on global secondary indexes'), {
          name: 'ValidationException',
          $fault: 'client',
          $metadata: { httpStatusCode: 400 },
        });
      }
      const def = defs.get(input.TableName as string)!;
      const index = input.IndexName as string;
      const keyNames = keyNamesOf(def, index);
      const { input: asked, strip } = withKeysProjected(input, keyNames);
      const hidden = (item: AttributeMap) => {
        const at = putAt.get(`${input.TableName}|${keyOf(def, item)}`);
        return at !== undefined && now() - at < lagMs;
      };
      const limit = typeof input.Limit === 'number' ? input.Limit : undefined;
      let result = await next({ ...args, input: asked });
      const items: AttributeMap[] = [];
      let scanned = 0;
      for (;;) {
        const out = result.output as { Items?: AttributeMap[]; Count?: number; ScannedCount?: number; LastEvaluatedKey?: AttributeMap };
        scanned += out.ScannedCount ?? 0;
        const page = out.Items ?? [];
        const visible = page.filter((i) => !hidden(i));
        items.push(...visible);
        // Read on only when a page with a Limit lost items to the lag and the index has more.
        if (visible.length === page.length || limit === undefined || items.length >= limit || !out.LastEvaluatedKey) {
          const kept = limit !== undefined ? items.slice(0, limit) : items;
          // A page cut short by the Limit continues after its last item, as the index would.
          const lastKey = limit !== undefined && items.length > limit ? pick(kept[kept.length - 1], keyNames) : out.LastEvaluatedKey;
          const output: AttributeMap = { ...out, Count: out.Items ? kept.length : out.Count, ScannedCount: scanned };
          if (out.Items) output.Items = kept.map((i) => strip(i));
          if (lastKey) output.LastEvaluatedKey = lastKey;
          else delete output.LastEvaluatedKey;
          return { ...result, output };
        }
        result = await next({ ...args, input: { ...asked, ExclusiveStartKey: out.LastEvaluatedKey } });
      }
    }
    const result = await next(args);
    const puts = putsOf(command, input);
    if (puts.length) {
      const t = now();
      forget(t);
      for (const p of puts) {
        const def = defs.get(p.table);
        if (def?.globalIndexes?.length && p.item) putAt.set(`${p.table}|${keyOf(def, p.item)}`, t);
      }
    }
    return result;
  });
}

/**
 * An `initialize` middleware of the DynamoDB client as an SDK plugin, named `name` (a second plugin
 * of that name replaces the first): `handle` gets each command's name and input (the document
 * client's before they are marshalled, and its answers after they are unmarshalled), sends it on
 * with `next(args)`, and returns the answer the caller gets.
 */
export function commandPlugin(
  name: string,
  handle: (command: string, input: Record<string, any>, next: any, args: any, context: any) => Promise<any>,
): Pluggable<any, any> {
  return {
    applyToStack: (stack: any) =>
      stack.add((next: any, context: any) => (args: any) => handle(context.commandName as string, args.input as AttributeMap, next, args, context), { step: 'initialize', name, override: true }),
  };
}

/** The table's and the index's key attributes: what every index item holds and a page key names. */
function keyNamesOf(def: TableDefinition, index: string): string[] {
  const g = (def.globalIndexes ?? []).find((x) => x.indexName === index)!;
  return [...new Set([def.partitionKey.name, def.sortKey?.name, g.partitionKey.name, g.sortKey?.name].filter((n): n is string => !!n))];
}

const pick = (item: AttributeMap | undefined, names: string[]) => (item ? Object.fromEntries(names.filter((n) => n in item).map((n) => [n, item[n]])) : undefined);

/**
 * The request with the key attributes added to its ProjectionExpression (the lag needs the key
 * of each item), and a function that takes them out of an item again when it did not ask for them.
 */
export function withKeysProjected(input: AttributeMap, keyNames: string[]): { input: AttributeMap; strip: (i: AttributeMap) => AttributeMap } {
  const projection = input.ProjectionExpression as string | undefined;
  if (!projection) return { input, strip: (i) => i };
  const names = (input.ExpressionAttributeNames as Record<string, string> | undefined) ?? {};
  const asked = new Set(projection.split(',').map((p) => p.trim().split(/[.[]/)[0]).map((p) => names[p] ?? p));
  const missing = keyNames.filter((n) => !asked.has(n));
  if (!missing.length) return { input, strip: (i) => i };
  const extra = Object.fromEntries(missing.map((n, i) => [`#awsHarshKey${i}`, n]));
  return {
    input: { ...input, ProjectionExpression: `${projection}, ${Object.keys(extra).join(', ')}`, ExpressionAttributeNames: { ...names, ...extra } },
    strip: (i) => Object.fromEntries(Object.entries(i).filter(([k]) => !missing.includes(k))),
  };
}

export function harshDynamoDbPlugins(env: NodeJS.ProcessEnv): Pluggable<any, any>[] {
  return gsiLagMs(env) > 0 ? [gsiLagPlugin(env)] : [];
}
