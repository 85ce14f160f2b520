/**
 * The hand-off's decisions (lambda/webhooks/rules/handoff.ts): what a run handing a delivery to
 * the retry workflow does with the record at each step, every branch as a row, and a property
 * over any answers the engines give: the order the design needs (design record 17).
 */
import fc from 'fast-check';
import { handoffStep, type Handoff, type HandoffDecision, type HandoffKnown, type NoteView, type StartAnswer } from '../../lambda/webhooks/rules/handoff';

type C = { tag: string };
const own: C = { tag: 'own' };
const theirs: C = { tag: 'theirs' };
const first: Handoff<C> = { attempts: 1, own };
const retried: Handoff<C> = { attempts: 3, retryOf: 2, own };
const noting = (counts?: C, queued?: number): NoteView<C> => ({ outcome: 'retrying', ...(queued !== undefined ? { queued } : {}), ...(counts ? { handoff_uncounted: counts } : {}) });

const rows: [string, Handoff<C>, HandoffKnown<C>, HandoffDecision<C>][] = [
  ['a first job notes its first hand-off', first, { step: 'begin' }, { do: 'note' }],
  ['a queued retry moves the note on from its own count', retried, { step: 'begin' }, { do: 'note', retryOf: 2 }],
  ['a job that found the note untaken takes it as it holds it', first, { step: 'begin', found: noting(theirs, 1) }, { do: 'take', queued: 1, counts: theirs }],
  ['a found note of another hand-off is taken for its own count', retried, { step: 'begin', found: noting(theirs, 2) }, { do: 'take', queued: 2, counts: theirs }],
  ['a found note without a count is taken for this hand-off', retried, { step: 'begin', found: noting(theirs) }, { do: 'take', queued: 3, counts: theirs }],
  ['a found note taken already: straight to the start', first, { step: 'begin', found: noting(undefined, 1) }, { do: 'start' }],
  ['a found record that ended: nothing to take', first, { step: 'begin', found: { outcome: 'success', handoff_uncounted: theirs } }, { do: 'start' }],
  ['its own note written: it takes its own counts', first, { step: 'noted', written: true }, { do: 'take', queued: 1, counts: own }],
  ['a queued retry\'s note moved on: it takes its own counts', retried, { step: 'noted', written: true }, { do: 'take', queued: 3, counts: own }],
  ['its note refused: it reads the record that refused it', first, { step: 'noted', written: false }, { do: 'read-note' }],
  ['the refusing note read untaken: taken as it holds it', first, { step: 'read', record: noting(theirs, 1) }, { do: 'take', queued: 1, counts: theirs }],
  ['the refusing note read taken: nothing to take', first, { step: 'read', record: noting(undefined, 1) }, { do: 'start' }],
  ['the refusing record read ended: nothing to take', first, { step: 'read', record: { outcome: 'failed' } }, { do: 'start' }],
  ['the refusing record read dropped: nothing to take', first, { step: 'read', record: { outcome: 'dropped', handoff_uncounted: theirs } }, { do: 'start' }],
  ['no record read after all: it takes its own counts', retried, { step: 'read', record: undefined }, { do: 'take', queued: 3, counts: own }],
  ['counted: it starts the execution', first, { step: 'counted' }, { do: 'start' }],
  ['started: the execution owns the delivery', first, { step: 'started', answer: 'started' }, { do: 'nothing', ran: false }],
  ['found running: the execution owns the delivery', first, { step: 'started', answer: 'running' }, { do: 'nothing', ran: false }],
  ['found closed: it put the retry job on the queue', first, { step: 'started', answer: 'closed' }, { do: 'nothing', ran: true }],
  ['found failed: the delivery ends from retrying', first, { step: 'started', answer: 'failed' }, { do: 'end-from-retrying' }],
  ['the start threw: the job comes back later', first, { step: 'started', answer: 'error' }, { do: 'come-back-later' }],
];

it.each(rows)('%s', (_why, h, known, expected) => {
  expect(handoffStep(h, known)).toEqual(expected);
});

const record = fc.option(
  fc.record({ outcome: fc.constantFrom('retrying', 'success', 'failed', 'dropped'), queued: fc.option(fc.integer({ min: 1, max: 5 }), { nil: undefined }), handoff_uncounted: fc.option(fc.constant(theirs), { nil: undefined }) }),
  { nil: undefined },
);
const handoff = fc.record({ attempts: fc.integer({ min: 1, max: 5 }), retryOf: fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }), own: fc.constant(own) });
const answer = fc.constantFrom<StartAnswer>('started', 'running', 'closed', 'failed', 'error');

/** Runs a hand-off to its end with the engines' answers given: the decisions made, in order. */
function run(h: Handoff<C>, found: NoteView<C> | undefined, written: boolean, read: NoteView<C> | undefined, started: StartAnswer): HandoffDecision<C>[] {
  const made: HandoffDecision<C>[] = [];
  let known: HandoffKnown<C> = { step: 'begin', found };
  for (let i = 0; i < 10; i++) {
    const d = handoffStep(h, known);
    made.push(d);
    if (d.do === 'note') known = { step: 'noted', written };
    else if (d.do === 'read-note') known = { step: 'read', record: read };
    else if (d.do === 'take') known = { step: 'counted' };
    else if (d.do === 'start') known = { step: 'started', answer: started };
    else return made;
  }
  throw new Error(`no end after ${made.length} decisions: ${JSON.stringify(made)}`);
}

it('whatever the engines answer: a note only when none was found, a read only of a refused note, at most one take and always before the one start, then one end', () => {
  fc.assert(
    fc.property(handoff, record, fc.boolean(), record, answer, (h, found, written, read, started) => {
      const made = run(h, found, written, read, started).map((d) => d.do);
      const count = (what: string) => made.filter((d) => d === what).length;
      expect(count('note')).toBe(found ? 0 : 1);
      expect(count('read-note')).toBe(!found && !written ? 1 : 0);
      expect(count('take')).toBeLessThanOrEqual(1);
      expect(count('start')).toBe(1);
      if (count('take')) expect(made.indexOf('take')).toBeLessThan(made.indexOf('start'));
      expect(made.at(-2)).toBe('start');
      // This run's own note (written, or none there when read) is always counted: its counts exist nowhere else.
      if (!found && (written || read === undefined)) expect(made).toContain('take');
    }),
  );
});
