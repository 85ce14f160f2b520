/**
 * Names and dimensions of the service's EMF metrics: written by lambda/core/observability.ts, read by
 * the dashboard and alarms (lib/constructs/dashboard.ts). Pure, so the CDK app imports it without
 * loading Powertools.
 */
/** The metric names; the dashboard and alarms (lib/constructs/dashboard.ts) use the same. */
export const METRIC = {
  /** Messages accepted by the publish endpoints (a batch counts its messages). */
  published: 'MessagesPublished',
  /** Messages returned by a consume; dimension `kind`: queue, stream, subscription. */
  consumed: 'MessagesConsumed',
  /** Queue messages acknowledged (single and batch ack). */
  acked: 'MessagesAcked',
  /** Queue messages republished to their dead-letter topic; dimension `reason`. */
  deadLettered: 'MessagesDeadLettered',
  /** Queue messages removed without a dead-letter topic to take them; dimension `reason`. */
  dropped: 'MessagesDropped',
  /** Webhook deliveries that ended with a 2xx (after however many attempts). */
  webhookDelivered: 'WebhookDelivered',
  /** Webhook deliveries that ended failed, all retries used. */
  webhookFailed: 'WebhookFailed',
  /** Webhook retries scheduled (one per failed attempt with retries left). */
  webhookRetried: 'WebhookRetried',
  /** Webhook hooks (on_success, on_failure, send_to_dlq) refused by the namespace's publish rate limit. */
  webhookHookRefused: 'WebhookHookRefused',
  /** Requests refused with 429 RATE_LIMIT_EXCEEDED; dimension `category`. */
  rateLimited: 'RateLimited',
  /**
   * Stream consume: messages the group has not read yet after the read (below the stable horizon,
   * less failed publishes; for a partition consume, that partition's). No group or stream
   * dimension (their number is unbounded): its Maximum is the lag of the furthest-behind group
   * that consumed in the period; each EMF line carries namespace, stream, consumer_group and
   * partition as metadata for a per stream, group and partition breakdown in Logs Insights.
   */
  streamLag: 'StreamConsumerLag',
  /**
   * A consume's handler time without the long-poll wait, in milliseconds; dimension `kind`. Long
   * polls of up to 25 s dominate the API latency p99 and the consume functions' duration p99; this
   * is the work (reads, claims, the response) beside them. Recorded by `timeConsume` of
   * lambda/core/observability.ts.
   */
  consumeTime: 'ConsumeTimeWithoutWait',
  /** Held messages (delay beyond 900 s) handed to their queues and webhooks by the scheduler tick. */
  delayedHandedOver: 'DelayedMessagesHandedOver',
  /** Held messages that came due after every one of their queues and webhooks was deleted. */
  delayedDropped: 'DelayedMessagesDropped',
  /** Schedule runs made (published, or refused and recorded in the schedule's last_error). */
  scheduleRuns: 'ScheduleRuns',
  /** Schedule runs whose publish was refused (no binding for the topic, rate limit, size). */
  scheduleRunsRefused: 'ScheduleRunsRefused',
  /** Per tick: how late the latest handover or run was against its time (seconds; the alarm fires above 60). */
  schedulerLag: 'SchedulerLagSeconds',
} as const;

export type MetricName = (typeof METRIC)[keyof typeof METRIC];

/** The bounded dimensions a metric may carry besides `service`. */
export interface MetricDimensions {
  kind?: 'queue' | 'stream' | 'subscription';
  category?: string;
  /** `max_retries` (delivered 1 + max_retries times) or `queue_full` (max_size_mb). */
  reason?: 'max_retries' | 'queue_full';
}
