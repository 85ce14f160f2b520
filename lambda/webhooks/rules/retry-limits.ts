/** The upper bounds of a webhook's `retry_count` and `max_retry_delay` (seconds): the longest retry schedule is their product. */
export const MAX_RETRY_COUNT = 20;
export const MAX_MAX_RETRY_DELAY = 86400;
