/**
 * The thresholds of the dashboard's alarms (./dashboard.ts) and the metric math they use.
 *
 * Alarm math that can fire: metric math over series that are absent when zero
 * (DynamoDB publishes no ThrottleEvents datapoint in a minute without throttles; our EMF counts
 * write nothing for zero) gives no datapoint wherever any operand is absent, and an alarm treats
 * missing data as not breaching: `a + b` alarms only when both a and b throttle in the same
 * period. Every operand is therefore wrapped in `FILL(m, 0)` ({@link filled}), and an alarm's
 * expression references at most {@link MAX_ALARM_METRICS} metrics (CloudWatch's hard limit for
 * metric math alarms), hence one throttle alarm per table.
 */

/** API 5xx share (0..1) over 5 minutes that raises the alarm. */
export const SERVER_ERROR_RATE_THRESHOLD = 0.01;
/** Webhook deliveries that end failed, in percent of those that ended, over 15 minutes. */
export const DELIVERY_FAILURE_RATE_PERCENT = 25;
/** Deliveries that must end in the window before the failure rate counts (no alarm on 1 of 2). */
export const DELIVERY_RATE_MIN_ENDED = 10;
/**
 * DynamoDB throttle events in 5 minutes. A few are expected: the rate-limit counter of a flooding
 * namespace throttles by design and answers 429 (lambda/limits/rate-limit.ts).
 */
export const DYNAMO_THROTTLE_THRESHOLD = 10;
/**
 * A function's errors alarm fires when errors occur in M of the last N five-minute periods: a
 * function that keeps failing pages, one bad invocation does not (its DLQ, the 5xx rate and the
 * logs still show it).
 */
export const FUNCTION_ERRORS_PERIODS = { datapointsToAlarm: 2, evaluationPeriods: 3 } as const;
/**
 * Webhook lag: the oldest first-attempt job has waited this long in the delivery queue, in two
 * consecutive five-minute periods. A healthy queue is drained within seconds; a job is received
 * again only after a 6-minute visibility timeout when the delivery function failed on it.
 */
export const WEBHOOK_LAG_THRESHOLD_SECONDS = 600;
/**
 * The oldest message of the stack's queues: an hour in two consecutive 5-minute periods means
 * some queue's consumers stopped or fell behind (a queue's TTL may be longer: the alarm is about
 * consumers, not loss). `queueAgeAlarmSeconds` changes it.
 */
export const QUEUE_AGE_THRESHOLD_SECONDS = 3600;

/**
 * A CloudWatch Metrics Insights query over the SQS queues whose name starts with `prefix` (the
 * queues behind service queues, made at runtime), aggregated to one series. `_` in LIKE matches any
 * one character; a prefix ends with `_q_`, so another stack's queues could match only under a stack
 * name of the same length differing just where the prefix has `_`.
 * @example sqsInsights('MAX', 'ApproximateAgeOfOldestMessage', 'Msg_q_') // SELECT MAX(ApproximateAgeOfOldestMessage) FROM SCHEMA("AWS/SQS", QueueName) WHERE QueueName LIKE 'Msg_q_%'
 */
export const sqsInsights = (fn: 'SUM' | 'MAX', metric: string, prefix: string): string =>
  `SELECT ${fn}(${metric}) FROM SCHEMA("AWS/SQS", QueueName) WHERE QueueName LIKE '${prefix}%'`;

/** CloudWatch: an alarm on metric math may reference at most 10 metrics (a hard limit). */
export const MAX_ALARM_METRICS = 10;

/**
 * A sum whose operands count as 0 where they have no datapoint.
 * @example filled(['r', 'w']) // 'FILL(r, 0) + FILL(w, 0)'
 */
export const filled = (ids: readonly string[]): string => ids.map((id) => `FILL(${id}, 0)`).join(' + ');

/**
 * The webhook failure rate in percent of the deliveries that ended, or 0 while fewer than `minEnded`
 * ended (no alarm on 1 failure of 2). Both counts are FILLed: a window with failures and no
 * successes has no `ok` datapoint, and that is the window that must alarm.
 * @example failureRateExpression(10) // 'IF(FILL(ok, 0) + FILL(failed, 0) >= 10, 100 * FILL(failed, 0) / (FILL(ok, 0) + FILL(failed, 0)), 0)'
 */
export const failureRateExpression = (minEnded: number): string => {
  const ended = filled(['ok', 'failed']);
  return `IF(${ended} >= ${minEnded}, 100 * FILL(failed, 0) / (${ended}), 0)`;
};
