/**
 * Time and ids come from here so tests can control them (STYLE.md habit 2).
 */
import { randomBytes } from 'node:crypto';

export interface Clock {
  now(): number;
}
export const systemClock: Clock = { now: () => Date.now() };

/**
 * A time-ordered, unique id: 10 characters of millisecond time (base 32, Crockford) then 16 random
 * characters, so ids sort by creation time like ULIDs.
 */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
export function newId(nowMs: number = Date.now()): string {
  let t = nowMs;
  let time = '';
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[t % 32] + time;
    t = Math.floor(t / 32);
  }
  // 16 characters of 5 random bits each: 80 bits, as in a ULID.
  let rand = '';
  for (const byte of randomBytes(16)) rand += ALPHABET[byte & 31];
  return time + rand;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
