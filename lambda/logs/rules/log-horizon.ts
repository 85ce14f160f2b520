/**
 * The readable end of an append-only log (stream or subscription) while publishes are in flight.
 *
 * A publish reserves a block of positions with one atomic counter update, then writes the log
 * items. Between the two, a reader could see a later block already written and an earlier one not
 * yet: returning the later block would move the reader's position past the earlier one for good.
 * So readers know every block in flight as pending (`pending[token] = first position of the
 * block`, the token carrying the reservation time): the reservations without a record
 * (./log-records.ts; before 2026-11-29, entries on the head that the publish removed once its
 * items were stored). Readers stop before the lowest pending block. A reservation whose publish died
 * between the two writes stops being honoured after {@link PENDING_SETTLE_MS}: its positions stay
 * a gap ("offsets may have gaps", DESIGN.md section 7). Pure.
 */
import { INTEGRATION_TIMEOUT_SECONDS } from '../../core/rules/gateway-responses';

/**
 * How long a publish lives at most: its Lambda's timeout, API Gateway's integration timeout
 * (../../domain/gateway-responses.ts; lib/constructs/functions.ts gives HTTP functions that timeout). From
 * {@link PENDING_SETTLE_MS} on, another may settle its block. The 60 s functions that publish too
 * (the scheduler's tick, webhook delivery) may outlive it; they write nothing past the write
 * window, and answer 503 whenever their record is refused because the block was settled
 * (lambda/logs/storage/log-records.ts `claimRun`); a record that lands, however late, excludes any settle
 * (lambda/logs/storage/log-reservations.ts `finishBlock`), so its publish answers 201. A block settled
 * under them is a gap over the whole block, whose positions readers pass whatever lands there
 * later (./log-gaps.ts: a chunk put sent in time may land after the settle), so the count and the
 * reads agree, and no 201 is given for a message readers passed.
 */
export const PUBLISH_LIFETIME_MS = INTEGRATION_TIMEOUT_SECONDS * 1000;

/**
 * The longest lifetime of a function that reserves positions: the scheduler's tick and webhook
 * delivery publish too and live 60 s (lib/constructs/scheduler.ts `TICK_TIMEOUT`,
 * lib/constructs/webhook-delivery.ts `DELIVERY_TIMEOUT`; test/unit/log-records.test.ts keeps them
 * within it).
 */
export const RESERVER_LIFETIME_MS = 60_000;

/**
 * How long after its token's time a reservation may land on the head at most: the token is made
 * before the UpdateItem is sent, the client sets no request timeout, so the request may be sent
 * (and retried) as long as its function lives, plus the margin of {@link PENDING_SETTLE_MS} for a
 * request sent just before the function was stopped and for the clocks of two containers.
 */
export const RESERVATION_LANDING_MS = RESERVER_LIFETIME_MS + 6_000;

/**
 * How long an unfinished reservation holds readers back, and the age from which its publish is
 * known dead, so that a publish moving its log's watermark (lambda/logs/storage/log-reservations.ts), or the
 * sweeper, settles it (counts what its block stored, records the rest as a gap): the publish's
 * lifetime and a margin for a write sent just before its Lambda was stopped and for the clocks of
 * two containers. Only a publish that died is ever skipped.
 */
export const PENDING_SETTLE_MS = PUBLISH_LIFETIME_MS + 6_000;

/**
 * A reservation token: its time first, so a reader can tell a stale reservation without a clock
 * field, then the block's size, so whoever clears the reservation (the publish, or the sweeper once
 * the publish died) knows what the block should have held.
 * @example pendingToken(0, { count: 10, bytes: 5120 }, 'ab') // '0-a-3yo-ab'
 */
export const pendingToken = (now: number, block: { count: number; bytes: number }, random: string) =>
  `${now.toString(36)}-${block.count.toString(36)}-${block.bytes.toString(36)}-${random}`;

/**
 * The random part of a token (after its third '-'; it may hold '-' itself): what keyed the head's
 * `pcum` entry of a reservation made before 2026-11-29 (lambda/logs/storage/log-gaps.ts clears it).
 * @example tokenKey('0-a-3yo-a-b') // 'a-b'
 */
export const tokenKey = (token: string) => token.split('-').slice(3).join('-');

/** Epoch ms of a reservation token, or NaN when it is not one. */
export const tokenTime = (token: string) => parseInt(token.split('-')[0], 36);

/** The number of positions and payload bytes a reservation token stands for. */
export function tokenBlock(token: string): { count: number; bytes: number } {
  const [, count, bytes] = token.split('-');
  return { count: parseInt(count, 36) || 0, bytes: parseInt(bytes, 36) || 0 };
}

/** Payload bytes of every reservation still pending (not yet known to be stored). */
export const pendingBytes = (pending: Record<string, number> | undefined) =>
  Object.keys(pending ?? {}).reduce((n, t) => n + tokenBlock(t).bytes, 0);

/**
 * The first position a reader must not return yet: the lowest block still being written, else the
 * log's next position.
 * @example stableHorizon({ 'k1': 10, 'k2': 4 }, 20, now) // 4 (when both tokens are fresh)
 */
export function stableHorizon(pending: Record<string, number> | undefined, next: number, now: number): number {
  let horizon = next;
  for (const [token, start] of Object.entries(pending ?? {})) {
    if (now - tokenTime(token) < PENDING_SETTLE_MS && start < horizon) horizon = start;
  }
  return horizon;
}

/** Tokens of reservations old enough to be dropped (their publish died). */
export const staleTokens = (pending: Record<string, number> | undefined, now: number) =>
  Object.keys(pending ?? {}).filter((t) => !(now - tokenTime(t) < PENDING_SETTLE_MS));

/**
 * The first position below which every block is settled, stale reservations included: the
 * sweeper trims only below it, so it never moves past a block whose outcome it has not counted;
 * readers stop before it once they settled the stale ones (lambda/logs/storage/log-reservations.ts
 * `settledForReaders`), so they pass a dead block only as a whole gap, never reading what a
 * settle would hide from later readers.
 * @example lowestPending({ 'k1': 10 }, 20) // 10
 */
export function lowestPending(pending: Record<string, number> | undefined, next: number): number {
  return Math.min(next, ...Object.values(pending ?? {}));
}
