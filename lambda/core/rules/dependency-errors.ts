/**
 * Which failures of a dependency (DynamoDB, SQS, Step Functions, Secrets Manager) are passing:
 * throttling, a service that says it is unavailable, or a call that timed out. The envelope
 * answers those with 503 SERVICE_UNAVAILABLE and `Retry-After`, so clients back off and retry;
 * anything else is 500 INTERNAL_ERROR (DESIGN.md section 3). Pure: it reads the fields the AWS
 * SDK puts on its errors (`name`, `$metadata.httpStatusCode`, `$retryable`) and Node's error
 * codes, and follows `cause` (and `reason`, the SQS sender's wrapper) through wrappers.
 */

/**
 * Error names the SDK's own retry strategy treats as throttling
 * (https://docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html), as DynamoDB, SQS
 * and Step Functions send them.
 */
const THROTTLING = new Set([
  'ThrottlingException',
  'Throttling',
  'ThrottledException',
  'RequestThrottledException',
  'TooManyRequestsException',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'RequestThrottled',
  'KmsThrottled',
  'KmsThrottlingException',
  'TransactionInProgressException',
  // A single write that met a transaction in progress on its item (nothing written; lambda/core/storage/client.ts retries it first).
  'TransactionConflictException',
  'LimitExceededException',
]);

/** A service that answered that it cannot serve now, or no answer in time. */
const UNAVAILABLE = new Set(['ServiceUnavailable', 'ServiceUnavailableException', 'TimeoutError', 'RequestTimeout', 'RequestTimeoutException']);

/** Node's codes of a connection that failed or was cut: the dependency could not be reached. */
const CONNECTION = new Set(['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN']);

interface SdkLike {
  name?: string;
  $fault?: 'client' | 'server';
  code?: string;
  $metadata?: { httpStatusCode?: number };
  $retryable?: { throttling?: boolean };
  CancellationReasons?: { Code?: string }[];
  cause?: unknown;
  reason?: unknown;
}

/**
 * Whether `e`, or an error it wraps, is a passing dependency failure worth a retry.
 * @example isPassingDependencyFailure(Object.assign(new Error('x'), { name: 'ProvisionedThroughputExceededException' })) // true
 * @example isPassingDependencyFailure(new TypeError('x is undefined')) // false
 */
export function isPassingDependencyFailure(e: unknown): boolean {
  const seen = new Set<unknown>();
  for (let cur = e as SdkLike | undefined; cur && typeof cur === 'object' && !seen.has(cur); cur = (cur.cause ?? cur.reason) as SdkLike | undefined) {
    seen.add(cur);
    if (THROTTLING.has(cur.name ?? '') || UNAVAILABLE.has(cur.name ?? '') || CONNECTION.has(cur.code ?? '')) return true;
    if (cancelledWithoutFault(cur)) return true;
    if (cur.$retryable?.throttling || cur.$metadata?.httpStatusCode === 503 || cur.$metadata?.httpStatusCode === 429) return true;
  }
  return false;
}

/**
 * The reasons of a TransactWriteItems cancelled without any fault of its own: other requests held
 * its items (`TransactionConflict`,
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-conflict-handling),
 * or DynamoDB throttled it (`ThrottlingError`, `ProvisionedThroughputExceeded`: "please try again
 * shortly", https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html,
 * Errors); `None` for the items that were fine.
 */
const PASSING_CANCELS = new Set(['None', 'TransactionConflict', 'ThrottlingError', 'ProvisionedThroughputExceeded']);

/**
 * A TransactWriteItems cancelled only for {@link PASSING_CANCELS} reasons: a cancelled transaction
 * applies none of its items, and the same transaction may succeed a moment later. The SDK retries
 * no TransactionCanceledException, so it is a passing failure here (503, and worth a retry). A
 * cancel with any other reason (`ConditionalCheckFailed` above all: the caller's "condition
 * failed", which it handles itself) is not.
 * @example cancelledWithoutFault({ name: 'TransactionCanceledException', CancellationReasons: [{ Code: 'ThrottlingError' }] }) // true
 */
function cancelledWithoutFault(e: SdkLike): boolean {
  if (e.name !== 'TransactionCanceledException') return false;
  const codes = (e.CancellationReasons ?? []).map((r) => r.Code ?? 'None');
  return codes.some((c) => c !== 'None') && codes.every((c) => PASSING_CANCELS.has(c));
}

/**
 * Whether a call that failed with `e` is worth calling again: a passing failure, or any error the
 * service answered as its own fault (a 5xx such as DynamoDB's `InternalServerError`, which the
 * envelope answers 500 rather than 503 but which the next call usually survives).
 * @example isRetryableDependencyFailure(Object.assign(new Error('x'), { name: 'InternalServerError', $fault: 'server' })) // true
 */
export function isRetryableDependencyFailure(e: unknown): boolean {
  if (isPassingDependencyFailure(e)) return true;
  const seen = new Set<unknown>();
  for (let cur = e as SdkLike | undefined; cur && typeof cur === 'object' && !seen.has(cur); cur = (cur.cause ?? cur.reason) as SdkLike | undefined) {
    seen.add(cur);
    if (cur.$fault === 'server' || (cur.$metadata?.httpStatusCode ?? 0) >= 500) return true;
  }
  return false;
}

/**
 * The error of a dependency call cut off at an answer deadline (an abort signal, ending the SDK's
 * own retries too) with its outcome unknown: named `TimeoutError`, a passing failure (503
 * SERVICE_UNAVAILABLE with `Retry-After`), where the SDK's bare `AbortError` would be a 500.
 * @example isPassingDependencyFailure(cutOffAtDeadline('the cursor move', new Error('Request aborted'))) // true
 */
export const cutOffAtDeadline = (what: string, cause: unknown): Error =>
  Object.assign(new Error(`${what} was cut off at the answer deadline`, { cause }), { name: 'TimeoutError' });

/** Seconds a client should wait before retrying after a passing failure. */
export const DEPENDENCY_RETRY_AFTER_SECONDS = 1;

/**
 * Calls `fn` until it succeeds, at most `tries` times, waiting `firstDelayMs` before the second
 * call and twice as long before each next one; an error `retryIf` refuses is thrown at once.
 * For the writes whose loss costs more than a slower answer (the clearing of a log reservation,
 * the outcome of a webhook attempt that was POSTed): beyond the SDK's own few retries, they
 * outlast a short outage (5 tries from 100 ms span 1.5 s of waits, 6 span 3.1 s).
 *
 * `outlastMs`: past `tries`, calls go on until one starts at least that long after the first
 * (a TransactWriteItems repeating its ClientRequestToken: AWS recovers a transaction still in
 * progress only for a retry 5 s or more after its first attempt, the TransactionInProgressException
 * "Recommended Settings",
 * https://docs.aws.amazon.com/AWSJavaSDK/latest/javadoc/com/amazonaws/services/dynamodbv2/model/TransactionInProgressException.html).
 * `until` (epoch ms): no wait ends after it; the last error is thrown instead (an answer due).
 * @example await withRetries(() => write(), { tries: 6, firstDelayMs: 100, retryIf: isRetryableDependencyFailure })
 */
export async function withRetries<T>(
  fn: () => Promise<T>,
  o: { tries: number; firstDelayMs: number; retryIf?: (e: unknown) => boolean; outlastMs?: number; until?: number },
): Promise<T> {
  const first = Date.now();
  for (let attempt = 1; ; attempt++) {
    const started = Date.now();
    try {
      return await fn();
    } catch (e) {
      if (o.retryIf && !o.retryIf(e)) throw e;
      if (attempt >= o.tries && started - first >= (o.outlastMs ?? 0)) throw e;
      const delay = o.firstDelayMs * 2 ** (attempt - 1);
      if (Date.now() + delay > (o.until ?? Infinity)) throw e;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}
