/**
 * Waits for every write of a publish, then throws the first failure. A failing binding must not
 * answer the publish while the others still write: Lambda freezes the container once the handler
 * answers, so their remaining calls (a stream clearing its reservation, a queue giving back its
 * room) would wait for the container's next invocation, if it ever comes; and a client retrying
 * the 5xx would race them.
 * @example await settleAll([storeInQueue(), appendToStream()]) // throws the queue's error after both ended
 */
export async function settleAll(writes: Promise<unknown>[]): Promise<void> {
  const failed = (await Promise.allSettled(writes)).find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}
