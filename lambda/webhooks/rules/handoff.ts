/**
 * What a run handing a delivery to the retry workflow does next with the delivery record
 * (../deliver.ts `handToWorkflow`; design record 17, "A note with no execution" and "The
 * hand-off's counts, once"). Pure: the run feeds back each answer it got and carries out the
 * decision ({@link handoffStep}), so every branch is a row of a table
 * (test/unit/webhooks-handoff.test.ts).
 *
 * The order is the one the design needs: the note first (the execution may send the retry job at
 * once, and only a job carrying the noted count attempts), then the take of its counts (before
 * the start, so every end from `retrying` finds them counted), then the start by the hand-off's
 * name (a running or ended execution is not started again).
 */

/** The part of a delivery record (../storage/webhook-deliveries.ts `DeliveryRecord`) the hand-off reads; `C`: its counts. */
export interface NoteView<C> {
  outcome: string;
  /** The hand-off the record notes: the retry after attempt `queued`. */
  queued?: number;
  /** The noted hand-off's counts, until a take counts them. */
  handoff_uncounted?: C;
}

/** What a start of the execution did (../storage/retry-workflow.ts `StartResult`), or `error`: it threw. */
export type StartAnswer = 'started' | 'running' | 'closed' | 'failed' | 'error';

/** The hand-off a run makes: the retry after attempt `attempts`. */
export interface Handoff<C> {
  attempts: number;
  /** The job is the queued retry after attempt `retryOf` (its failure moves the note on); absent for a first job. */
  retryOf?: number;
  /** The counts this run's own note carries (../storage/webhook-deliveries.ts `handoffCounts`). */
  own: C;
}

/** What the run knows so far: each answer moves it one step on. */
export type HandoffKnown<C> =
  /** Nothing yet; `found`: the record as the job read it when it notes this hand-off already (a copy, the job back after its run threw, a `start_retry` job). */
  | { step: 'begin'; found?: NoteView<C> }
  /** The run's note was written, or refused (the record exists: a copy's note, or it moved on). */
  | { step: 'noted'; written: boolean }
  /** The record read after a refused note (undefined: none). */
  | { step: 'read'; record: NoteView<C> | undefined }
  /** The counts were taken, or there were none to take. */
  | { step: 'counted' }
  | { step: 'started'; answer: StartAnswer };

/** What the run does next. The last three end the run. */
export type HandoffDecision<C> =
  /** Write the note: the first hand-off's record (`retryOf` absent), or move the queued retry's note on from `retryOf`. */
  | { do: 'note'; retryOf?: number }
  /** The note was refused: read the record that refused it (one read unit, only then). */
  | { do: 'read-note' }
  /** Take the noted hand-off's counts, as the note holds them (every take of a hand-off is then the same request, as its token requires). */
  | { do: 'take'; queued: number; counts: C }
  /** Start the hand-off's execution by its name. */
  | { do: 'start' }
  /** The start failed: the job waits on the queue (`start_retry`) and starts it later, without POSTing. */
  | { do: 'come-back-later' }
  /** The execution of that name closed as failed and the record still notes it: end the delivery from `retrying` as the failed-execution rule would. */
  | { do: 'end-from-retrying' }
  /** The execution runs, or ran and put the retry job on the queue (`ran`): it owns the delivery. */
  | { do: 'nothing'; ran: boolean };

/** The counts to take when the record as known is `note` (undefined: this run's own note holds them), if any. */
function take<C>(h: Handoff<C>, note: NoteView<C> | undefined): HandoffDecision<C> {
  if (!note) return { do: 'take', queued: h.attempts, counts: h.own };
  // A note taken already (no counts left), or a record that ended or moved past `retrying`: nothing to take.
  if (note.outcome !== 'retrying' || !note.handoff_uncounted) return { do: 'start' };
  return { do: 'take', queued: note.queued ?? h.attempts, counts: note.handoff_uncounted };
}

/**
 * The next thing a run handing off `h` does, given what it knows.
 * @example handoffStep({ attempts: 1, own }, { step: 'begin' }) // { do: 'note' }
 * @example handoffStep({ attempts: 1, own }, { step: 'noted', written: true }) // { do: 'take', queued: 1, counts: own }
 */
export function handoffStep<C>(h: Handoff<C>, k: HandoffKnown<C>): HandoffDecision<C> {
  switch (k.step) {
    case 'begin':
      if (k.found) return take(h, k.found);
      return h.retryOf === undefined ? { do: 'note' } : { do: 'note', retryOf: h.retryOf };
    case 'noted':
      return k.written ? take(h, undefined) : { do: 'read-note' };
    case 'read':
      return take(h, k.record);
    case 'counted':
      return { do: 'start' };
    case 'started':
      if (k.answer === 'error') return { do: 'come-back-later' };
      if (k.answer === 'failed') return { do: 'end-from-retrying' };
      return { do: 'nothing', ran: k.answer === 'closed' };
  }
}
