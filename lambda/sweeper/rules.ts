/**
 * The sweeper lease's expiry (lambda/sweeper/storage/sweeper-lease.ts): one sweep at a time, and a
 * lease its holder never gives back frees itself once the holder's invocation must have ended. Pure.
 */

/**
 * Added to the invocation's remaining time to make the lease's expiry: covers clock skew between
 * containers (Lambda hosts are NTP-synchronised, typically within milliseconds).
 */
export const LEASE_CLOCK_MARGIN_MS = 5_000;

/**
 * When a lease taken at `now` by an invocation with `remainingMs` left must expire.
 * @example leaseUntil(0, 60_000) // 65000
 */
export const leaseUntil = (now: number, remainingMs: number): number => now + remainingMs + LEASE_CLOCK_MARGIN_MS;
