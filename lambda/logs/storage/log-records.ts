/**
 * Reservation records of an append-only log: what a publish call writes once its block's outcome
 * is known, one small item per call under the log's records key (keys.ts `logRecordsPk`), in
 * place of an entry on the head (lambda/logs/rules/log-records.ts has the protocol).
 *
 * Why not on the head: the head's key takes every publish call's reservation, and DynamoDB bills
 * a write by the larger of the item's sizes before and after, rounded up to 1 KB
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html#write-operation-consumption).
 * A `pending` entry per reservation in flight (about 25 bytes) made every head write 3 units with
 * 100 calls in flight, and the clearing was a second head write per call. Here a call writes the
 * head once (1 unit) and its record once (1 unit, on another key); the head's watermark moves
 * once per {@link WATERMARK_EVERY} calls.
 *
 * Order: a record is written after the block's chunks (and partition marks), so a reader that
 * reads the head, then the records, finds every block below the first number without a record
 * complete. A record is conditional on its number having none, and whoever settles a dead run
 * claims every number of it first (`claimRun`), so a publish and whoever settles it as dead (the
 * sweeper) never both record one block; a record lives 7 days (TTL, free), far
 * longer than the watermark, which the publishes and the sweeper move, takes to pass it.
 */
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, isConditionFailed, tableName, transactWrite } from '../../core/storage/client';
import { metaKeys, ttlSeconds } from '../../core/storage/keys';
import { HEAD_MAX_GAPS, type Gap } from '../rules/retention';
import { recordGaps, recordSk, runToken, walkRecords, type MissingRun, type RecordMarks, type ReservationRecord } from '../rules/log-records';
import { PENDING_SETTLE_MS } from '../rules/log-horizon';

const META = () => tableName('meta');
const RECORD_TTL_MS = 7 * 86_400_000;

/** Records a read of the head takes at most (about 80 bytes each); past them the rest is treated as in flight. */
const RECORDS_READ_LIMIT = 1000;

/** A publish call whose reservation number is one less than a multiple of this moves the watermark. */
export const WATERMARK_EVERY = 32;

interface Ref {
  namespace: string;
  id: string;
}

/** The records from the watermark on (strongly consistent; none to read when every reservation has one). */
async function readRecords(ref: Ref, head: RecordMarks, upTo = (head.seq ?? 0) - 1, limit = RECORDS_READ_LIMIT, abortSignal?: AbortSignal): Promise<ReservationRecord[]> {
  const w = head.w ?? 0;
  if (upTo < w) return [];
  const out = await ddb().send(
    new QueryCommand({
      TableName: META(),
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :lo AND :hi',
      ExpressionAttributeValues: { ':pk': metaKeys.logRecordsPk(ref.namespace, ref.id), ':lo': recordSk(w), ':hi': recordSk(upTo) },
      ConsistentRead: true,
      Limit: limit,
    }),
    { abortSignal },
  );
  return (out.Items ?? []) as ReservationRecord[];
}

/**
 * The blocks in flight of a head read strongly, as pending entries (lambda/logs/rules/log-horizon.ts: token →
 * first position), beside the head's own entries (reservations made before 2026-11-29); and the
 * gaps of the records read (lambda/logs/rules/log-records.ts `recordGaps`), some perhaps recorded since the
 * head was read. `abortSignal` ends the read, the SDK's retries included (as ./log-heads.ts `getHead`).
 */
export async function inFlightOf(ref: Ref, head: RecordMarks & { pending?: Record<string, number> }, abortSignal?: AbortSignal): Promise<{ pending: Record<string, number>; gaps: Record<string, Gap> }> {
  const records = await readRecords(ref, head, undefined, undefined, abortSignal);
  const { runs } = walkRecords(head, records);
  return { pending: { ...(head.pending ?? {}), ...Object.fromEntries(runs.map((r) => [runToken(r), r.s])) }, gaps: recordGaps(records) };
}

/** What a record says: reservation `seq` (through `to` for a settled run) held positions [s, s + n) and bytes [c, c + b). */
export interface RecordInput {
  seq: number;
  to?: number;
  s: number;
  n: number;
  b: number;
  c: number;
  tok: string;
  /** Written by whoever settles a dead run (`runRecord`): it may replace a claim (`claimRun`), a publish's record may not. */
  settles?: boolean;
}

/** What writing a record came to: written (or already by this publish), another's record there, or the head refused the gap. */
export type RecordOutcome = 'written' | 'taken' | 'head-refused';

/**
 * Writes a reservation's record, with `lost` (what its block did not store) as a gap on the head in
 * the same transaction, so a gap is counted exactly when its block's record is written. `written`
 * also when this publish had written it already (an SDK retry after a lost answer); `taken` when
 * the number has another's record (it was settled as dead); `head-refused` when the head is
 * deleted or its gaps are full (lambda/logs/storage/log-reservations.ts `recordBlock` spills them and tries again).
 */
export async function writeRecord(ref: Ref, r: RecordInput, lost?: { end: number; gap: Gap }): Promise<RecordOutcome> {
  const Item = { pk: metaKeys.logRecordsPk(ref.namespace, ref.id), sk: recordSk(r.seq), s: r.s, n: r.n, b: r.b, c: r.c, ra: Date.now(), tok: r.tok, ...(r.to !== undefined ? { to: r.to } : {}), ...(lost ? { g: lost.gap.n } : {}), ttl: ttlSeconds(Date.now() + RECORD_TTL_MS) };
  const put = { TableName: META(), Item, ConditionExpression: r.settles ? 'attribute_not_exists(sk) OR attribute_exists(claim)' : 'attribute_not_exists(sk)' };
  if (!lost) return (await putOnce(put)) ? 'written' : 'taken';
  try {
    await transactWrite({
      TransactItems: [
        { Put: put },
        {
          Update: {
            TableName: META(),
            Key: metaKeys.logHead(ref.namespace, ref.id),
            UpdateExpression: 'SET gaps.#end = :gap',
            ConditionExpression: 'attribute_exists(#next) AND attribute_not_exists(deleted_at) AND size(gaps) < :max',
            ExpressionAttributeNames: { '#end': String(lost.end), '#next': 'next' },
            ExpressionAttributeValues: { ':gap': lost.gap, ':max': HEAD_MAX_GAPS },
          },
        },
      ],
    });
    return 'written';
  } catch (e) {
    const reasons = (e as { CancellationReasons?: { Code?: string }[] }).CancellationReasons;
    if (!reasons) throw e;
    if (reasons[0]?.Code === 'ConditionalCheckFailed') return (await ownRecord(Item.pk, Item.sk, r.tok)) ? 'written' : 'taken';
    if (reasons[1]?.Code === 'ConditionalCheckFailed') return 'head-refused';
    throw e;
  }
}

/**
 * A conditional record put; on a refusal, whether the record there is this publish's own (the
 * refusal carries the item with `ReturnValuesOnConditionCheckFailure: ALL_OLD`, at no read cost:
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_PutItem.html).
 */
async function putOnce(put: { TableName: string; Item: Record<string, unknown> & { tok: string }; ConditionExpression: string }): Promise<boolean> {
  try {
    await ddb().send(new PutCommand({ ...put, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' }));
    return true;
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
    // The refusal's item is in DynamoDB's attribute-value form (the document client does not unmarshall errors).
    const tok = (e as { Item?: { tok?: { S?: string } } }).Item?.tok?.S;
    return tok === put.Item.tok;
  }
}

/** The record (or claim) at reservation number `seq`, read strongly; undefined when there is none. */
export async function readRecord(ref: Ref, seq: number): Promise<{ tok?: string; claim?: number; g?: number } | undefined> {
  const out = await ddb().send(new GetCommand({ TableName: META(), Key: { pk: metaKeys.logRecordsPk(ref.namespace, ref.id), sk: recordSk(seq) }, ConsistentRead: true }));
  return out.Item as { tok?: string; claim?: number; g?: number } | undefined;
}

async function ownRecord(pk: string, sk: string, tok: string): Promise<boolean> {
  const out = await ddb().send(new GetCommand({ TableName: META(), Key: { pk, sk }, ConsistentRead: true }));
  return out.Item?.tok === tok;
}

/**
 * Moves the head's watermark over the records complete from `read` (the head as its caller read
 * it) up to reservation `upTo`: one Query of small items and, when it moved, one head write,
 * conditional on the watermark `read` saw (a concurrent move wins; nothing moves back). Best
 * effort: a watermark left behind only makes readers read more records. Returns the first run
 * of reservations without a record when a record follows it and its publishes cannot be running
 * any more (lambda/logs/rules/log-horizon.ts `PENDING_SETTLE_MS`), for its caller to settle: the watermark
 * stops before it until then. Returns too the watermark as this call left it.
 */
export async function advanceWatermark(ref: Ref, read: RecordMarks, upTo: number, now = Date.now()): Promise<{ dead?: MissingRun; marks: RecordMarks }> {
  const w = read.w ?? 0;
  if (read.w === undefined || upTo < w) return { marks: read };
  const records = await readRecords(ref, read, upTo, 4 * WATERMARK_EVERY);
  const { runs, done } = walkRecords({ ...read, seq: upTo + 1 }, records);
  const lastRead = records.length ? Number(records[records.length - 1].sk) : -1;
  const dead = runs[0] && runs[0].to < lastRead && now - runs[0].time >= PENDING_SETTLE_MS ? runs[0] : undefined;
  if (done.w <= w) return { dead, marks: read };
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: META(),
        Key: metaKeys.logHead(ref.namespace, ref.id),
        UpdateExpression: 'SET w = :w, ws = :ws, wc = :wc',
        ConditionExpression: 'w = :old',
        ExpressionAttributeValues: { ':w': done.w, ':ws': done.ws, ':wc': done.wc, ':old': w },
      }),
    );
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
    return { dead, marks: read };
  }
  return { dead, marks: { ...read, ...done } };
}

/** Claims put at once at most while settling a long run. */
const CLAIMS_AT_ONCE = 16;

/**
 * Claims reservations `from + 1`..`to` of a dead run before its record (at `from`, covering them
 * with `to`) is written: a claim is a record key that a publish's record put (conditional on the
 * key being empty) is refused by, so a publisher of the run that wakes up late gets `taken` (and
 * answers 503) instead of recording its own gap beside the run's: one record key per reservation
 * number, whoever writes it. Each claim is conditional on the key holding nothing or a claim (of
 * an earlier attempt); false when a publish's record is there (it recorded before the claim: the
 * run is not what its settler walked, and the next walk splits it). Walks ignore claims
 * (lambda/logs/rules/log-records.ts), so a settler that stops after some claims leaves the run as it was,
 * with its publishers refused: it is dead, and the next settler records it as a gap.
 */
export async function claimRun(ref: Ref, run: { from: number; to: number }, token: string): Promise<boolean> {
  const pk = metaKeys.logRecordsPk(ref.namespace, ref.id);
  for (let k = run.from + 1; k <= run.to; k += CLAIMS_AT_ONCE) {
    const batch = Array.from({ length: Math.min(CLAIMS_AT_ONCE, run.to - k + 1) }, (_, i) => k + i);
    const claimed = await Promise.all(
      batch.map((j) =>
        ddb()
          .send(new PutCommand({ TableName: META(), Item: { pk, sk: recordSk(j), claim: run.from, tok: token, ttl: ttlSeconds(Date.now() + RECORD_TTL_MS) }, ConditionExpression: 'attribute_not_exists(sk) OR attribute_exists(claim)' }))
          .then(
            () => true,
            (e: unknown) => {
              if (isConditionFailed(e)) return false;
              throw e;
            },
          ),
      ),
    );
    if (claimed.includes(false)) return false;
  }
  return true;
}

/**
 * The record that settles a run of reservations whose publishes died (a run token of
 * `inFlightOf`, its block at `start`): one record covering the whole run.
 */
export const runRecord = (run: { from: number; to: number; c: number }, token: string, start: number, block: { count: number; bytes: number }): RecordInput => ({
  seq: run.from,
  ...(run.to > run.from ? { to: run.to } : {}),
  s: start,
  n: block.count,
  b: block.bytes,
  c: run.c,
  tok: token,
  settles: true,
});
