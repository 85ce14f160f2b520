/**
 * A DynamoDB meter that also attributes write units to partition keys, for the "busiest partition
 * key" figures of bench/streams.ts: DynamoDB throttles per partition key (about 1,000 write units
 * a second each), so the busiest key, not the table total, is a resource's write ceiling.
 *
 * Every call is asked for ReturnConsumedCapacity=INDEXES. Units of the table and its local indexes
 * go to the item's partition key (an LSI entry lives in the item's collection); units of a global
 * index go to the index as one key (its keys here are shared by every resource of a kind). A
 * BatchWriteItem reports units per table only, so they are shared among its items by their
 * estimated size (DynamoDB bills each item by its own size, rounded up to 1 KB).
 *
 * Reads are counted at DynamoDB's billing floor: a request reads at least one 4 KB unit (half for
 * an eventually consistent read) even when it finds nothing, which DynamoDB Local reports as 0.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

type Units = { CapacityUnits?: number; Table?: { CapacityUnits?: number }; LocalSecondaryIndexes?: Record<string, { CapacityUnits?: number }>; GlobalSecondaryIndexes?: Record<string, { CapacityUnits?: number }>; TableName?: string };

export interface KeySnapshot {
  calls: Record<string, number>;
  readUnits: number;
  writeUnits: number;
  /** Write units per `table|partition key` (global indexes as `table/index`). */
  writesByKey: Record<string, number>;
}

const round = (n: number) => Math.round(n * 1000) / 1000;
/** A key attribute as the document client or the low-level client gives it. */
const str = (v: unknown): string => (typeof v === 'string' || typeof v === 'number' ? String(v) : ((v as { S?: string; N?: string })?.S ?? (v as { N?: string })?.N ?? '?'));
const firstAttr = (item: Record<string, unknown> | undefined) => (item ? str(Object.values(item)[0]) : '?');

export class KeyMeter {
  private calls = new Map<string, number>();
  private reads = 0;
  private writes = 0;
  private byKey = new Map<string, number>();
  /** Partition key attribute name of each physical table (the first key attribute). */
  constructor(private readonly partitionKeyOf: (table: string) => string) {}

  reset() {
    this.calls.clear();
    this.byKey.clear();
    this.reads = 0;
    this.writes = 0;
  }

  snapshot(): KeySnapshot {
    return {
      calls: Object.fromEntries(this.calls),
      readUnits: round(this.reads),
      writeUnits: round(this.writes),
      writesByKey: Object.fromEntries([...this.byKey].map(([k, v]) => [k, round(v)])),
    };
  }

  /** The key with the most write units, and its units. */
  busiest(): { key: string; units: number } {
    let best = { key: '-', units: 0 };
    for (const [key, units] of this.byKey) if (units > best.units) best = { key, units };
    return best;
  }

  attach(client: DynamoDBClient) {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as Record<string, any>;
        input.ReturnConsumedCapacity = 'INDEXES';
        const out = await next(args);
        this.record(String(context.commandName).replace(/Command$/, ''), input, (out.output as { ConsumedCapacity?: Units | Units[] }).ConsumedCapacity);
        return out;
      },
      { step: 'initialize', name: 'benchKeyMeter', priority: 'high' },
    );
  }

  private addKey(key: string, units: number) {
    if (units > 0) this.byKey.set(key, (this.byKey.get(key) ?? 0) + units);
  }

  private record(command: string, input: Record<string, any>, consumed: Units | Units[] | undefined) {
    this.calls.set(command, (this.calls.get(command) ?? 0) + 1);
    const list = Array.isArray(consumed) ? consumed : consumed ? [consumed] : [];
    const isRead = /^(Get|BatchGet|Query|Scan|TransactGet)/.test(command);
    if (isRead) {
      const total = list.reduce((n, c) => n + (c.CapacityUnits ?? 0), 0);
      const requests = command === 'BatchGetItem' ? Object.values(input.RequestItems ?? {}).reduce((n: number, t: any) => n + (t.Keys?.length ?? 0), 0) : 1;
      const strong = command === 'BatchGetItem' ? Object.values(input.RequestItems ?? {}).some((t: any) => t.ConsistentRead) : Boolean(input.ConsistentRead);
      this.reads += Math.max(total, requests * (strong ? 1 : 0.5));
      return;
    }
    for (const c of list) {
      this.writes += c.CapacityUnits ?? 0;
      for (const [index, u] of Object.entries(c.GlobalSecondaryIndexes ?? {})) this.addKey(`${c.TableName}/${index}`, u.CapacityUnits ?? 0);
      const local = (c.Table?.CapacityUnits ?? 0) + Object.values(c.LocalSecondaryIndexes ?? {}).reduce((n, u) => n + (u.CapacityUnits ?? 0), 0);
      const table = c.TableName as string;
      const pkName = this.partitionKeyOf(table);
      if (command === 'BatchWriteItem') {
        const reqs = (input.RequestItems?.[table] ?? []) as { PutRequest?: { Item: Record<string, unknown> }; DeleteRequest?: { Key: Record<string, unknown> } }[];
        const weights = reqs.map((r) => (r.PutRequest ? Math.ceil(JSON.stringify(r.PutRequest.Item).length / 1024) : 1));
        const sum = weights.reduce((a, b) => a + b, 0) || 1;
        reqs.forEach((r, i) => {
          const item = r.PutRequest?.Item ?? r.DeleteRequest?.Key;
          this.addKey(`${table}|${str(item?.[pkName])}`, (local * weights[i]) / sum);
        });
      } else if (command === 'TransactWriteItems') {
        const first = input.TransactItems?.[0];
        const op = first?.Put?.Item ?? first?.Update?.Key ?? first?.Delete?.Key;
        this.addKey(`${table}|${str(op?.[pkName])}`, local);
      } else {
        this.addKey(`${table}|${str((input.Item ?? input.Key)?.[pkName]) || firstAttr(input.Key)}`, local);
      }
    }
  }
}

/**
 * A KeyMeter on the runtime's DynamoDB client, knowing each table's partition key from the one set
 * of table definitions; the physical table names with it. Import after the bench env is started
 * (it reads the runtime's config).
 */
export async function meterTables(): Promise<{ meter: KeyMeter; physical: Record<string, string> }> {
  const { dynamoClient } = await import('../lambda/core/storage/client');
  const { config } = await import('../lambda/core/config');
  const { TABLES } = await import('../lambda/core/storage/tables');
  const physical = config().tableNames as Record<string, string>;
  const pkOf = new Map(Object.values(TABLES).map((t) => [physical[t.id], t.partitionKey.name]));
  const meter = new KeyMeter((table) => pkOf.get(table) ?? 'pk');
  meter.attach(dynamoClient());
  return { meter, physical };
}
