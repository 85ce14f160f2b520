/**
 * The webhook counter writer partitions (lambda/webhooks/storage/).
 *
 * Promise (docs/design/0018-webhook-delivery-writes.md, DESIGN.md webhooks: status counts each
 * delivery once; "folding changes no sum"): a status read shows every counted delivery exactly
 * once, also while another read folds idle writers into the total.
 *
 * Scenario: a webhook's counts sit in writer items idle past FOLD_IDLE_MS; one status read folds
 * them (one transaction: the total gains their counts, the writer items are deleted) while other
 * status reads run. A read is now three Queries made at once (the total's partition and the two
 * writer partitions), not one Query of one partition, so a read whose total's Query answers after
 * the fold and whose writer partition's Query answered before it counts the folded writers twice
 * (and the other order drops them).
 *
 * Observed (first run, 488 reads in 25 rounds): 8 reads showed success_count 80 (every folded
 * writer counted twice: the total after the fold plus the writer items before it) or none at all
 * (the total before the fold, the writers after). Expected: every read shows 40. Reads of one
 * partition's Query before the change could not see the fold half-made on DynamoDB Local.
 */
import { randomUUID } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb } from '../../lambda/core/storage/client';
import { metaKeys } from '../../lambda/core/storage/keys';
import { counterUpdate, FOLD_IDLE_MS, foldWriters, readWebhookCounters } from '../../lambda/webhooks/storage/webhook-counters';

jest.setTimeout(120_000);

const WRITERS = ['writer-a#0', 'writer-b#1', 'writer-c#2', 'writer-d#3'];
const EACH = 10;

/** A webhook incarnation whose counts (EACH successes per writer) were written by idle writers. */
async function idleCounts(ns: string, webhookId: string, writtenAt: number, layout: 'partitions' | 'one partition') {
  for (const w of WRITERS) {
    const u = counterUpdate(ns, webhookId, { success: EACH, failure: 0, pending: 0, at: writtenAt, successAt: writtenAt }, w, 1, writtenAt)!;
    // 'one partition': the layout before the change (writer items beside the total), still read.
    const Key = layout === 'partitions' ? u.Key : { pk: metaKeys.webhookStatus(ns, webhookId).pk, sk: u.Key.sk };
    await ddb().send(new UpdateCommand({ ...u, Key }));
  }
}

it.each(['partitions', 'one partition'] as const)('every status read beside a fold of idle writers (%s) shows each counted delivery once', async (layout) => {
  const ns = `r15fold-${randomUUID().slice(0, 8)}`;
  const wrong: string[] = [];
  let reads = 0;
  for (let round = 0; round < 25; round++) {
    const id = `W${round}-${randomUUID().slice(0, 8)}`;
    const now = Date.now();
    await idleCounts(ns, id, now - FOLD_IDLE_MS - 60_000, layout);
    const { status, fold } = await readWebhookCounters(ns, id, now);
    expect(status.success_count).toBe(WRITERS.length * EACH);
    expect(fold?.writers).toHaveLength(WRITERS.length);
    let folded = false;
    // Status reads running the whole time the fold is made (as concurrent GET /webhooks/{name}/status do).
    const reader = async () => {
      while (!folded) {
        const r = await readWebhookCounters(ns, id, now);
        reads++;
        if (r.status.success_count !== WRITERS.length * EACH) wrong.push(`round ${round}: ${r.status.success_count}`);
      }
    };
    const readers = Array.from({ length: 6 }, reader);
    await new Promise((r) => setTimeout(r, 15));
    expect(await foldWriters(fold!)).toBe('folded');
    await new Promise((r) => setTimeout(r, 15));
    folded = true;
    await Promise.all(readers);
    expect((await readWebhookCounters(ns, id, now)).status.success_count).toBe(WRITERS.length * EACH);
  }
  expect({ reads, wrong }).toEqual({ reads, wrong: [] });
});
