/**
 * The simulation's one ledger: every answer the API gave, with the step and the actor that asked,
 * and the message ids it named. The checkers (./checkers.ts, ./checkers-queues.ts) judge the
 * service against it and nothing else: what an actor believes is what the API told it.
 */
import { ApiClient, type Answer } from '../faults/api';

export interface Entry {
  step: number;
  actor: string;
  method: string;
  path: string;
  status: number;
  code?: string;
  /** Message ids the answer named (a publish's, a batch's, a consume's). */
  ids: string[];
  at: number;
}

/** A message an answer 201 promised, with where it must end up. */
export interface Promised {
  id: string;
  /** The marker its payload carries (payloads of the simulation are `{"m": marker}`). */
  marker: string;
  topic: string;
  step: number;
  /** Seconds beyond 900 (held by the service), or undefined. */
  heldSeconds?: number;
}

export class Ledger {
  readonly entries: Entry[] = [];
  /** Messages answered 201, by marker. */
  readonly promised = new Map<string, Promised>();
  step = 0;

  constructor(readonly api: ApiClient) {}

  /** One API call, recorded whatever it answered. */
  async call<T = any>(actor: string, method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Answer<T>> {
    const a = await this.api.call<T>(method, path, body, headers);
    const d = a.body?.data as any;
    const ids: string[] = d?.message_id ? [d.message_id] : Array.isArray(d?.message_ids) ? d.message_ids : Array.isArray(d?.messages) ? d.messages.map((m: any) => m.message_id).filter(Boolean) : [];
    this.entries.push({ step: this.step, actor, method, path, status: a.status, code: a.code, ids, at: Date.now() });
    return a;
  }

  /** Publishes `markers` to `topic` (one message, or a batch when there are several). */
  async publish(actor: string, topic: string, markers: string[], extra: Record<string, unknown> = {}, headers?: Record<string, string>) {
    const path = `/topics/${topic}/messages${markers.length > 1 ? '/batch' : ''}`;
    const body = markers.length > 1 ? { messages: markers.map((m) => ({ payload: JSON.stringify({ m }), ...extra })) } : { payload: JSON.stringify({ m: markers[0] }), ...extra };
    const a = await this.call(actor, 'POST', path, body, headers);
    if (a.status === 201) {
      const ids: string[] = markers.length > 1 ? a.body!.data.message_ids : [a.body!.data.message_id];
      const held = typeof extra.delay_seconds === 'number' && extra.delay_seconds > 900 ? extra.delay_seconds : undefined;
      markers.forEach((m, i) => this.promised.set(m, { id: ids[i], marker: m, topic, step: this.step, heldSeconds: held }));
    }
    return a;
  }

  /** Answers by `status code`, for the progress lines and the report. */
  tally(): Record<string, number> {
    const t: Record<string, number> = {};
    for (const e of this.entries) {
      const k = `${e.status}${e.code ? ` ${e.code}` : ''}`;
      t[k] = (t[k] ?? 0) + 1;
    }
    return t;
  }
}

/** The marker a stored payload carries, or undefined. */
export function markerOf(payload: string): string | undefined {
  try {
    return (JSON.parse(payload) as { m?: string }).m;
  } catch {
    return undefined;
  }
}
