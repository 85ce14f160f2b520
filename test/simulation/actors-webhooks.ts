/**
 * The webhook actors: publishers to the webhooks' topics, a dead endpoint under steady traffic,
 * two bulk replays at once, and a `rate_limit` lowered (by two changes at once) while deliveries are in flight. The
 * webhooks and their receivers are made by the world (./world.ts, ./receivers.ts).
 */
import type { Seen } from './actors';
import type { World } from './world';

export interface WebhookSeen {
  /** When the dead endpoint's steady traffic began (and in which step), and its stop. */
  deadSince?: number;
  deadStep?: number;
  stopDead?: () => Promise<void>;
  replayMarkers: string[];
  /** Each change of the rate webhook's `rate_limit`: when its PATCH answered, and the new limit. */
  rateChanges: { at: number; limit: number; step: number }[];
  rateMarkers: string[];
}

export const newWebhookSeen = (): WebhookSeen => ({ replayMarkers: [], rateChanges: [], rateMarkers: [] });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export type WebhookAction =
  | { kind: 'webhook-publish'; n: number }
  | { kind: 'dead-endpoint' }
  | { kind: 'replay'; n: number }
  | { kind: 'rate-change'; n: number; from: number; to: number };

export async function actWebhooks(w: World, seen: Seen & { hooks: WebhookSeen }, a: WebhookAction, step: number, random: () => number): Promise<void> {
  const { ledger, names } = w;
  const r = names.root;
  const hs = seen.hooks;
  const mark = (p: string, i: number) => `${p}${step}.${i}.${Math.floor(random() * 1e6)}`;
  switch (a.kind) {
    case 'webhook-publish': {
      await Promise.all(Array.from({ length: a.n }, (_, i) => ledger.publish('webhook-publisher', `${r}/k/x`, [mark('k', i)])));
      return;
    }
    case 'dead-endpoint': {
      if (hs.stopDead) return;
      // 2 messages a second until the drain, or until the status answers `disabled` (read every
      // 5 s): what the checker (./checkers-webhooks.ts `deadDisabled`) judges is then reached,
      // and later deliveries to a disabled webhook fail at once, unsent (docs/webhooks.md "Endpoint
      // health").
      hs.deadSince = Date.now();
      hs.deadStep = step;
      let on = true;
      const loop = (async () => {
        for (let i = 0; on; i++) {
          await ledger.publish('dead-endpoint-publisher', `${r}/dd/x`, [mark('d', i)]);
          await sleep(500);
          if (i % 10 === 9 && (await ledger.call('dead-endpoint-publisher', 'GET', `/webhooks/${names.hooks.dead}/status`)).body?.data?.status === 'disabled') return;
        }
      })();
      hs.stopDead = async () => {
        on = false;
        await loop;
      };
      return;
    }
    case 'replay': {
      const since = new Date(Date.now() - 1000).toISOString();
      const markers = Array.from({ length: a.n }, (_, i) => mark('rp', i));
      const ans = await ledger.publish('replay-publisher', `${r}/rp/x`, markers);
      if (ans.status !== 201) return;
      hs.replayMarkers.push(...markers);
      // Wait until each failed (retry_count 0: one attempt) and the status counts it (the counts
      // are written after the log pages a bulk replay reads, docs/webhooks.md "Replay"). A delivery
      // batch that failed on an injected fault comes back after the job's 30 s visibility
      // (./world.ts): a bulk replay before its POSTs failed would find nothing to replay.
      const failed = () => new Set(w.receivers.posts.filter((p) => p.path === '/replay' && p.status >= 500).map((p) => p.marker));
      for (let t = 0; t < 200 && !markers.every((m) => failed().has(m)); t++) await sleep(250);
      for (let t = 0; t < 40; t++) {
        const st = await ledger.call('replayer', 'GET', `/webhooks/${names.hooks.replay}/status`);
        if ((st.body?.data?.failure_count ?? 0) >= hs.replayMarkers.length) break;
        await sleep(250);
      }
      w.receivers.replayHealthy.add(step);
      // A 5xx says the replay may be sent again (docs/webhooks.md "Replay"): the replayer does, as a client would.
      const replay = async () => {
        for (let t = 0; t < 5; t++) {
          const ans = await ledger.call('replayer', 'POST', `/webhooks/${names.hooks.replay}/replay`, { since, status: 'failed' });
          if (ans.status < 500) return;
          await sleep(500);
        }
      };
      await Promise.all([replay(), replay()]);
      return;
    }
    case 'rate-change': {
      // The raise counts as a change too: the windows after it are judged against `from`.
      const raise = await ledger.call('rate-admin', 'PATCH', `/webhooks/${names.hooks.rate}`, { rate_limit: a.from });
      if (raise.status === 200) hs.rateChanges.push({ at: Date.now(), limit: a.from, step });
      const markers = Array.from({ length: a.n }, (_, i) => mark('rt', i));
      const ans = await ledger.publish('rate-publisher', `${r}/rt/x`, markers);
      if (ans.status === 201) hs.rateMarkers.push(...markers);
      await sleep(1000);
      // Two changes at once, the lowered limit and a raise to twice the old one: whichever is
      // written last holds (its version numbers the slots), read back once both answered. (A
      // change that lost the write race and was written again over the other kept its older
      // version once, and the other's rate went on numbering the slots: 21 requests in a second at 2.)
      // Either may apply first: until the read, the higher one is what the seconds are judged by.
      hs.rateChanges.push({ at: Date.now(), limit: a.from * 2, step });
      const [low, high] = await Promise.all([
        ledger.call('rate-admin', 'PATCH', `/webhooks/${names.hooks.rate}`, { rate_limit: a.to }),
        ledger.call('rate-admin', 'PATCH', `/webhooks/${names.hooks.rate}`, { rate_limit: a.from * 2 }),
      ]);
      const at = Date.now();
      const read = await ledger.call('rate-admin', 'GET', `/webhooks/${names.hooks.rate}`);
      const limit = read.body?.data?.rate_limit;
      if ((low.status === 200 || high.status === 200) && typeof limit === 'number') hs.rateChanges.push({ at, limit, step });
      return;
    }
  }
}
