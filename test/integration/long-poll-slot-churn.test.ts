/**
 * Long-poll slots (lambda/queues/storage/long-poll-slots.ts) under churn: 300 consumes take a slot
 * of one namespace item at once, hold it briefly and give it back, while a random subset of the slot
 * writes is applied by DynamoDB and its answer lost (a timeout after the write, which the SDK's
 * standard retry sends again: https://docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html).
 * The promises of docs/design/0006-bounded-consume.md ("A slot is taken and given back once"): at no
 * moment do more consumes hold a slot than the namespace's limit; the item's count is at every read
 * the number of ids its holders' sets hold and never negative; and once every slot is given back
 * the count is 0 and the sets are gone (DynamoDB removes a set whose last element is deleted:
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.UpdateExpressions.html#Expressions.UpdateExpressions.DELETE).
 * Only answers of attempts the SDK will send again are lost, so every write ends answered (at most 30
 * lost, so that the SDK's retry quota, 500 tokens at 14 a retried timeout, never runs out while they
 * are in flight at once in this one process).
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, dynamoClient, resetClients, tableName } from '../../lambda/core/storage/client';
import { releaseSlot, slotKeys, takeSlot, type SlotLimits } from '../../lambda/queues/storage/long-poll-slots';

jest.setTimeout(180_000);

const PERIOD_MS = 60_000;
const CONSUMES = 300;

/** Loses the answer of up to `budget` applied UpdateItem attempts on keys starting with `prefix`, never of an SDK call's last attempt. */
function loseSomeAnswers(prefixes: string[], rate: number, budget: number): { lost: () => number; stop: () => void } {
  let lost = 0;
  const name = `churn-lose-${randomUUID()}`;
  dynamoClient().middlewareStack.add(
    (next, context) => async (args) => {
      const body = args.input as { Key?: { pk?: { S?: string } | string } };
      const pk = typeof body.Key?.pk === 'string' ? body.Key.pk : (body.Key?.pk?.S ?? '');
      const header = (args.request as { headers?: Record<string, string> }).headers?.['amz-sdk-request'] ?? '';
      const [, attempt, max] = /attempt=(\d+); max=(\d+)/.exec(header) ?? [];
      const retried = attempt !== undefined && Number(attempt) < Number(max);
      if (context.commandName !== 'UpdateItemCommand' || !retried || !prefixes.some((p) => pk.startsWith(p)) || lost >= budget || Math.random() >= rate) return next(args);
      // Only writes DynamoDB applied: a take, a give-back or a roll-over that counted. The budget is
      // held before the write is sent, since many are in flight at once.
      lost++;
      try {
        await next(args);
      } catch (e) {
        lost--;
        throw e;
      }
      throw Object.assign(new Error('injected: answer lost after the write'), { name: 'TimeoutError', $metadata: {} });
    },
    { step: 'deserialize', name },
  );
  return { lost: () => lost, stop: () => dynamoClient().middlewareStack.remove(name) };
}

type Raw = { period?: number; used?: number; h0?: Set<string>; h1?: Set<string>; c0?: number; c1?: number };
const read = async (key: { pk: string; sk: string }) => (await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: key, ConsistentRead: true }))).Item as Raw | undefined;
const held = (item: Raw | undefined) => (item?.h0?.size ?? 0) + (item?.h1?.size ?? 0);

async function churn(LIMIT: number, periodOf: (i: number) => number) {
  const ns = `chu-${randomUUID().slice(0, 8)}`;
  const limits: SlotLimits = { perNamespace: LIMIT, total: 1000, pool: `churn-${randomUUID()}`, shards: 2 };
  const key = slotKeys.namespace(ns);
  // A client of its own, with a full retry quota: a retry that DynamoDB refuses (the once-only
  // condition) gives back none of the quota it took, so a quota spent by an earlier case would
  // stop the SDK's retries here.
  resetClients();
  const lose = loseSomeAnswers([`NS#${ns}#`, `LONGPOLL#${limits.pool}#`], 0.15, 30);
  let holding = 0;
  let most = 0;
  const seen: string[] = [];
  let done = false;
  // A reader beside the consumes: every read of the item must be consistent with itself.
  const watcher = (async () => {
    while (!done) {
      const item = await read(key);
      if (item && (item.used! < 0 || item.used! > LIMIT || item.used !== held(item))) seen.push(`used ${item.used}, holders ${held(item)}`);
      await sleep(10);
    }
  })();
  const errors: string[] = [];
  const outcomes = { taken: 0, namespace: 0, total: 0, failed: 0, notGivenBack: 0 };
  try {
    await Promise.all(
      Array.from({ length: CONSUMES }, async (_, i) => {
        await sleep(Math.random() * 3000);
        // A shortened consume is sent again by its client (docs/publishing-and-queues.md): every one
        // of the 300 takes a slot in the end, so the item sees 300 takes and 300 give-backs.
        for (let tries = 0; tries < 100; tries++) {
          let r;
          try {
            r = await takeSlot(ns, limits, PERIOD_MS, periodOf(i));
          } catch (e) {
            errors.push(`${(e as Error).name}: ${(e as Error).message}`);
            outcomes.failed++;
            return;
          }
          if (!r.taken) {
            outcomes[r.full]++;
            await sleep(100 + Math.random() * 300);
            continue;
          }
          outcomes.taken++;
          most = Math.max(most, ++holding);
          await sleep(Math.random() * 50);
          holding--;
          await releaseSlot(r.slot).catch(() => outcomes.notGivenBack++);
          return;
        }
      }),
    );
  } finally {
    done = true;
    lose.stop();
    await watcher;
  }
  const item = await read(key);
  return { LIMIT, ns, limits, key, most, seen, outcomes, item, lost: lose.lost(), errors: [...new Set(errors)] };
}

it('300 consumes taking and giving back slots of one namespace, some answers lost, count each slot once and leave nothing counted', async () => {
  const now = Date.now();
  // A limit the 300 never reach: a take sent again after its answer was lost always meets room
  // (on a full item the retry is refused for fullness and the once-only condition is not put to the test).
  const r = await churn(CONSUMES, () => now);
  console.log(JSON.stringify({ lost: r.lost, most: r.most, outcomes: r.outcomes, item: r.item, errors: r.errors, inconsistent: r.seen.slice(0, 5) }));
  expect(r.lost).toBeGreaterThan(10);
  expect(r.outcomes.taken).toBe(CONSUMES);
  expect(r.most).toBeLessThanOrEqual(r.LIMIT);
  expect(r.seen).toEqual([]);
  expect(r.outcomes.notGivenBack + r.outcomes.failed).toBe(0);
  expect(r.item?.used).toBe(0);
  expect(r.item?.h0).toBeUndefined();
  expect(r.item?.h1).toBeUndefined();
  for (const shard of [0, 1]) {
    const s = await read(slotKeys.shard(r.limits.pool, shard));
    expect({ used: s?.used ?? 0, held: held(s) }).toEqual({ used: 0, held: 0 });
  }
});

it('the same churn across a roll-over, clocks of half the consumes a period behind, leaves nothing counted', async () => {
  const g = Math.floor(Date.now() / PERIOD_MS) + 20;
  // A limit of 10: mostly full, so refusals carry the item back and the roll-overs race takes.
  const r = await churn(10, (i) => (i % 2 === 0 ? g : g + 1) * PERIOD_MS + 5);
  console.log(JSON.stringify({ lost: r.lost, most: r.most, outcomes: r.outcomes, item: r.item, errors: r.errors, inconsistent: r.seen.slice(0, 5) }));
  expect(r.outcomes.taken).toBe(CONSUMES);
  expect(r.most).toBeLessThanOrEqual(r.LIMIT);
  expect(r.seen).toEqual([]);
  expect(r.outcomes.notGivenBack + r.outcomes.failed).toBe(0);
  expect({ used: r.item?.used, held: held(r.item) }).toEqual({ used: 0, held: 0 });
});
