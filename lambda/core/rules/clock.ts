/**
 * Time and ids come from here so tests can control them (STYLE.md habit 2).
 */
import { createHash, randomBytes } from 'node:crypto';

export interface Clock {
  now(): number;
}
export const systemClock: Clock = { now: () => Date.now() };

/**
 * A time-ordered, unique id: 10 characters of millisecond time (base 32, Crockford) then 16
 * random characters, so ids sort by creation time like ULIDs. Ids made in the same millisecond
 * by this container sort in the order they were made (ULID's monotonic mode: the random part of
 * the previous id plus one), so the messages of one batch sort, and are handed out, in batch
 * order. A new millisecond starts from fresh random bits.
 */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const RANDOM_CHARS = 16;

let lastTime = -1;
let lastRandom: number[] = [];

/** The random part after `digits` (base-32 digits, most significant first); undefined on overflow. */
function increment(digits: number[]): number[] | undefined {
  const out = [...digits];
  for (let i = out.length - 1; i >= 0; i--) {
    if (out[i] < 31) {
      out[i]++;
      return out;
    }
    out[i] = 0;
  }
  return undefined;
}

export function newId(nowMs: number = Date.now()): string {
  let random = nowMs === lastTime ? increment(lastRandom) : undefined;
  // 16 characters of 5 random bits each: 80 bits, as in a ULID. (After 2^80 ids in one
  // millisecond the increment overflows; starting afresh then only loses the order.)
  random ??= [...randomBytes(RANDOM_CHARS)].map((b) => b & 31);
  lastTime = nowMs;
  lastRandom = random;
  return timePart(nowMs) + random.map((d) => ALPHABET[d]).join('');
}

/** The 10 characters of millisecond time that start an id. */
function timePart(ms: number): string {
  let t = ms;
  let time = '';
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[t % 32] + time;
    t = Math.floor(t / 32);
  }
  return time;
}

/**
 * An id of the same form as {@link newId} that is the same every time it is made from the same
 * `timeMs` and `seed` (its 80 bits after the time are the seed's SHA-256), for a message the
 * service may have to publish again after a lost answer and that must keep its id.
 * @example derivedId(1700000000000, 'dead-letter q1 01H... 0') === derivedId(1700000000000, 'dead-letter q1 01H... 0') // true
 */
export function derivedId(timeMs: number, seed: string): string {
  const digest = createHash('sha256').update(seed).digest();
  return timePart(timeMs) + [...digest.subarray(0, RANDOM_CHARS)].map((b) => ALPHABET[b & 31]).join('');
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
