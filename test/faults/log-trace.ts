/**
 * A trace of one log's DynamoDB calls during a fault run, for tracing a loss (`FAULT_TRACE_DIR`:
 * each run that loses a subscriber message, or whose subscriber got messages only after the
 * sweeper, writes its trace there). One `initialize` middleware
 * on the real client, outermost (it sees the document client's commands unmarshalled, and each
 * call once, whatever the SDK retried): every call whose input names the log's id, with when it
 * was sent and answered and how it ended. The dump adds where each lost message is stored, the
 * reservation records and claims, the head and the subscriber's cursor, read without faults.
 */
import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName } from '../../lambda/core/storage/client';
import { metaKeys } from '../../lambda/core/storage/keys';

export interface TraceEvent {
  cmd: string;
  t0: number;
  t1?: number;
  out?: string;
  what: unknown;
}

type Input = Record<string, any>;

/** What a call's input says about the log, in a few fields. */
function summary(cmd: string, i: Input, id: string): unknown {
  const brief = (item: Input | undefined) => item && { pk: item.pk, sk: item.sk, log: item.log, first: item.first, last: item.last, s: item.s, n: item.n, g: item.g, to: item.to, claim: item.claim, ra: item.ra, tok: item.tok, cursor: item.cursor };
  if (cmd === 'PutItemCommand') return { put: brief(i.Item), cond: i.ConditionExpression };
  if (cmd === 'UpdateItemCommand') {
    const v = i.ExpressionAttributeValues ?? {};
    return { key: i.Key, upd: String(i.UpdateExpression).slice(0, 60), tok: v[':tok'], seen: v[':seen'], next: v[':next'], n: v[':n'], w: v[':w'] };
  }
  if (cmd === 'BatchWriteItemCommand') {
    return Object.values(i.RequestItems ?? {}).flatMap((reqs: any) => reqs.map((r: any) => (r.PutRequest ? brief(r.PutRequest.Item) : { del: r.DeleteRequest?.Key }))).filter((x: any) => JSON.stringify(x).includes(id));
  }
  if (cmd === 'TransactWriteItemsCommand') return (i.TransactItems ?? []).map((t: any) => (t.Put ? { put: brief(t.Put.Item) } : t.Update ? { upd: t.Update.Key, e: String(t.Update.UpdateExpression).slice(0, 60), v: t.Update.ExpressionAttributeValues } : t));
  if (cmd === 'QueryCommand') return { table: i.TableName, v: i.ExpressionAttributeValues, limit: i.Limit };
  if (cmd === 'GetItemCommand') return { key: i.Key };
  return undefined;
}

export class LogTrace {
  readonly events: TraceEvent[] = [];
  private id = '';

  /** Traces the calls naming `id` from now on. */
  watch(id: string) {
    this.id = id;
  }

  attach(client: { middlewareStack: unknown }) {
    const stack = client.middlewareStack as { add: (...a: never[]) => void; remove: (n: string) => boolean };
    stack.remove('logTrace');
    const mw = (next: (a: unknown) => Promise<any>, context: { commandName?: string }) => async (args: { input?: Input }) => {
      const cmd = context.commandName ?? '?';
      if (!this.id || !JSON.stringify(args.input ?? {}).includes(this.id)) return next(args);
      const e: TraceEvent = { cmd, t0: Date.now(), what: summary(cmd, args.input ?? {}, this.id) };
      this.events.push(e);
      try {
        const out = await next(args);
        e.t1 = Date.now();
        e.out = 'ok';
        if (cmd === 'QueryCommand') e.out = `ok ${JSON.stringify((out.output?.Items ?? []).map((x: Input) => x.sk ?? [x.first, x.last]))}`;
        if (cmd === 'GetItemCommand') e.out = `ok ${JSON.stringify(out.output?.Item ? { s: out.output.Item.s, tok: out.output.Item.tok, claim: out.output.Item.claim, cursor: out.output.Item.cursor, next: out.output.Item.next, seq: out.output.Item.seq, w: out.output.Item.w } : null)}`;
        return out;
      } catch (err) {
        e.t1 = Date.now();
        e.out = `err ${(err as Error).name}`;
        throw err;
      }
    };
    stack.add(mw as never, { step: 'initialize', priority: 'high', name: 'logTrace' } as never);
  }

  /** Writes the trace and what the log holds for `lost` (message ids) to `dir`. */
  async dump(dir: string, o: { namespace: string; id: string; subscriber: string; lost: string[]; label: string; extra?: unknown }) {
    const all = async (input: Record<string, unknown>) => {
      const items: Input[] = [];
      let start: Input | undefined;
      do {
        const page = await ddb().send(new QueryCommand({ ...input, ExclusiveStartKey: start, ConsistentRead: true } as never));
        items.push(...((page.Items ?? []) as Input[]));
        start = page.LastEvaluatedKey as Input | undefined;
      } while (start);
      return items;
    };
    const chunks = await all({ TableName: tableName('subscriptionLog'), KeyConditionExpression: '#l = :l', ExpressionAttributeNames: { '#l': 'log' }, ExpressionAttributeValues: { ':l': o.id } });
    const lost = new Set(o.lost);
    const positions = chunks.flatMap((c) => (c.m as any[]).filter((t) => lost.has(t[t.length - 1]) || t.some((x: unknown) => typeof x === 'string' && lost.has(x))).map((t) => ({ position: t[0], chunk: [c.first, c.last], at: c.at })));
    const records = await all({ TableName: tableName('meta'), KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': metaKeys.logRecordsPk(o.namespace, o.id) } });
    const logItems = await all({ TableName: tableName('meta'), KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': metaKeys.logPk(o.namespace, o.id) } });
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `${o.label}-${Date.now()}.json`);
    writeFileSync(file, JSON.stringify({ extra: o.extra, lost: o.lost, positions, chunks: chunks.map((c) => ({ first: c.first, last: c.last, n: c.n, at: c.at })), records, logItems, events: this.events }, null, 0));
    return file;
  }
}
