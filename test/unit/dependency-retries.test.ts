/**
 * withRetries (domain/dependency-errors.ts): the retries beyond the SDK's own for the writes whose
 * loss costs more than a slower answer.
 */
import { isPassingDependencyFailure, withRetries } from '../../lambda/core/rules/dependency-errors';

const throttled = () => Object.assign(new Error('throttled'), { name: 'ThrottlingException' });

describe('withRetries', () => {
  it('calls again after a failure, waiting longer each time, and returns the first success', async () => {
    const at: number[] = [];
    let calls = 0;
    const value = await withRetries(async () => {
      at.push(Date.now());
      if (++calls < 3) throw throttled();
      return 'ok';
    }, { tries: 5, firstDelayMs: 20 });
    expect(value).toBe('ok');
    expect(calls).toBe(3);
    // 20 ms, then 40 ms (timers may fire a little late, never early).
    expect(at[1] - at[0]).toBeGreaterThanOrEqual(19);
    expect(at[2] - at[1]).toBeGreaterThanOrEqual(39);
  });

  it('throws the last error after `tries` calls', async () => {
    let calls = 0;
    await expect(withRetries(async () => {
      calls++;
      throw throttled();
    }, { tries: 3, firstDelayMs: 1 })).rejects.toThrow('throttled');
    expect(calls).toBe(3);
  });

  it('with outlastMs, calls past `tries` until one call starts that long after the first', async () => {
    const at: number[] = [];
    await expect(withRetries(async () => {
      at.push(Date.now());
      throw throttled();
    }, { tries: 2, firstDelayMs: 10, outlastMs: 60 })).rejects.toThrow('throttled');
    // Waits 10, 20, 40: the fourth call starts 70 ms or more after the first, the last.
    expect(at).toHaveLength(4);
    expect(at[3] - at[0]).toBeGreaterThanOrEqual(60);
  });

  it('with until, throws the last error rather than wait past it', async () => {
    let calls = 0;
    const started = Date.now();
    await expect(withRetries(async () => {
      calls++;
      throw throttled();
    }, { tries: 10, firstDelayMs: 20, outlastMs: 60_000, until: started + 50 })).rejects.toThrow('throttled');
    // Waits 20, then 40 would end past `until`: two calls (fewer on a slow machine), far from the
    // 10 tries and 60 s that would hold the test past its timeout without `until`.
    expect(calls).toBeLessThanOrEqual(2);
  });

  it('throws at once an error that retryIf refuses', async () => {
    let calls = 0;
    await expect(withRetries(async () => {
      calls++;
      throw new TypeError('a bug, not a passing failure');
    }, { tries: 5, firstDelayMs: 1, retryIf: isPassingDependencyFailure })).rejects.toThrow(TypeError);
    expect(calls).toBe(1);
  });
});

describe('isRetryableDependencyFailure', () => {
  it('retries passing failures and the service faults the envelope answers 500, not bugs or refusals', async () => {
    const { isRetryableDependencyFailure } = await import('../../lambda/core/rules/dependency-errors');
    expect(isRetryableDependencyFailure(throttled())).toBe(true);
    expect(isRetryableDependencyFailure(Object.assign(new Error('ise'), { name: 'InternalServerError', $fault: 'server', $metadata: { httpStatusCode: 500 } }))).toBe(true);
    expect(isRetryableDependencyFailure(new Error('wrapped', { cause: Object.assign(new Error('ise'), { $fault: 'server' }) }))).toBe(true);
    expect(isRetryableDependencyFailure(Object.assign(new Error('bad'), { name: 'ValidationException', $fault: 'client', $metadata: { httpStatusCode: 400 } }))).toBe(false);
    expect(isRetryableDependencyFailure(new TypeError('x is undefined'))).toBe(false);
  });
});
