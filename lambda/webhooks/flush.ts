/**
 * The end of a delivery batch or retry Task (./deliver.ts): what its runs collected is written, the
 * delivery-log pages first, then the status counters (storage/delivery-log.ts,
 * storage/webhook-counters.ts), so that a failure the status counts (`failure_count`) is one a bulk
 * replay made at once finds (docs/webhooks.md).
 *
 * A failure whose log page or retained copy could not be written is not counted yet: its counts
 * are noted on its delivery record (`uncounted`) and its job or Task is failed. Run again, it
 * reads the record (no POST), writes the page and the copy (./delivery-log.ts `keepAgain`), and
 * takes the note with one conditional write, so the failure is counted once, by the run that kept
 * them. A note that cannot be written either falls back to counting now: a failure is never left
 * uncounted.
 */
import { withRetries, isRetryableDependencyFailure } from '../core/rules/dependency-errors';
import { countLater, flushCounts, takeApart } from './storage/webhook-counters';
import { markUncounted, type DeliveryKey } from './storage/webhook-deliveries';
import { logger } from '../core/observability';
import { flushLogPages } from './delivery-log';

/** The note is tried about 3 s beyond the SDK's retries, as the record's write is. */
const NOTE_RETRIES = { tries: 6, firstDelayMs: 100, retryIf: isRetryableDependencyFailure };

/**
 * Writes what this batch or Task collected (see the top). Never throws: what could not be written
 * is logged. Answers the deliveries that ended in failure and are not kept for replay
 * (./delivery-log.ts `unkeptId`): the handler fails their jobs or the Task, which run again and
 * keep them, and count them then.
 */
export async function flushDeliveryWrites(): Promise<Set<string>> {
  const unkept = await flushLogPages();
  await Promise.all(
    takeApart<DeliveryKey>(unkept).map(async (a) => {
      try {
        await withRetries(() => markUncounted(a.ref, a.d), NOTE_RETRIES);
      } catch (e) {
        logger.error('uncounted webhook failure not noted on its record; counted now', { namespace: a.ns, message_id: a.ref.messageId, error: (e as Error)?.message });
        countLater(a.ns, a.webhookId, a.d);
      }
    }),
  );
  try {
    await flushCounts();
  } catch (e) {
    logger.error('webhook delivery counters not all written', { error: (e as Error)?.message });
  }
  return unkept;
}
