/**
 * The fault suite writes its rows of docs/design/0012-fault-injection-suite.md itself (test/faults/figure-rows.ts): a
 * run's figures give exactly the row format of the committed section, and a new run of a seed
 * replaces that seed's rows in place.
 */
import { join } from 'node:path';
import { readFigures } from '../../bench/figures';
import { faultRows, withRows, type RunFigures } from '../faults/figure-rows';

const section = readFigures(join(__dirname, '../..')).sections.faults;

/** Figures as scenario.ts prints them, with the values of the seed-101 run of the committed section. */
const seed101: RunFigures = {
  seed: 101,
  seconds: { total: 34.2 },
  sdk: {
    calls: { dynamodb: 5542, sqs: 644, sfn: 44 },
    attemptsFailed: 669,
    attemptsFailedBy: { 'dynamodb before ThrottlingException': 300, 'sqs before RequestThrottled': 35, 'dynamodb after InternalServerError': 334 },
    callsFailedAfterSdkRetries: { dynamodb: 129, sqs: 12, sfn: 1 },
  },
  answers: { '201': 300, '200': 128, '400 INVALID_REQUEST': 3, '422 VALIDATION_ERROR': 1, '500 INTERNAL_ERROR': 18, '503 SERVICE_UNAVAILABLE': 21 },
  messages: { answered201: 786, lost: { queue: 0, webhook: 0, stream: 0, streamGroup: 0, subscriptionStored: 0, subscriber: 0 } },
  duplicates: { queueAfterAck: 24, queueAfterAckFromCopies: 24, webhookAfterSuccess: 21, webhookAfterSuccessFromJobCopies: 21, retriedPublishes: 99 },
  counters: {
    queue: { before: 817, after: 786, truth: 786 },
    stream: { before: 792, truth: 786 },
    subscription: { before: 786, truth: 786 },
    webhook: { success: 786, truthSuccess: 786 },
  },
  heldBackUntilTheSweeper: { subscriber: 0, streamGroup: 396 },
};

describe('fault suite figure rows', () => {
  it('formats a run exactly as the committed rows of its seed', () => {
    const [run, outcome] = faultRows('5 %', seed101);
    expect(section.markdown).toContain(run);
    expect(section.markdown).toContain(outcome);
  });

  it('replaces the rows of the same run and seed in place, and adds new seeds at the end', () => {
    const changed = { ...seed101, seconds: { total: 40 } };
    const replaced = withRows(section.markdown, faultRows('5 %', changed));
    expect(replaced.split('\n').length).toBe(section.markdown.trim().split('\n').length);
    expect(replaced).toContain('| 40 s |');
    expect(replaced.indexOf('| 5 % | 101 |')).toBe(section.markdown.indexOf('| 5 % | 101 |'));
    const added = withRows(section.markdown, faultRows('5 %', { ...seed101, seed: 999 }));
    expect(added.split('\n').length).toBe(section.markdown.trim().split('\n').length + 2);
  });

  it('starts both tables when the section is empty', () => {
    const fresh = withRows('', faultRows('5 %', seed101));
    expect(fresh.split('\n\n')).toHaveLength(2);
    expect(fresh).toMatch(/^\| run \| seed \| SDK calls/);
  });
});
