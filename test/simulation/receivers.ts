/**
 * The simulation's webhook receivers: one HTTP server, one behaviour per path, every request
 * recorded (path, message id, the status it answered, when).
 *
 * - `/ok`: 200 at once. `/rate`: 200 at once (the rate checker reads the times). `/slow`: 200
 *   after 50 to 200 ms (the in-flight checker reads how many were open at once).
 * - `/flaky`: per request, from the seed: 200, 500, 200 after 0.3 to 1 s, an answer after the
 *   webhook's timeout (5 s: far from the slow answers, as the receiver shares the service's event
 *   loop, whose stalls under a burst would otherwise blur which side of the timeout an answer
 *   fell), or the connection closed without an answer.
 * - `/dead`: 500 always. `/replay`: 500 for a message of a replay step (marker `rp{step}.…`) until
 *   that step is in `replayHealthy`, then 200: a later step's outage fails only its own messages,
 *   not the replays of earlier steps still on their way.
 */
import { createServer } from 'node:http';
import type { Socket } from 'node:net';
import { seededRandom } from '../../local/seeded-random';
import { readDelivery } from '../faults/receiver';

export interface Post {
  path: string;
  messageId: string;
  marker: string;
  /**
   * The status as the service saw it: 0 when the connection was closed without an answer, or when
   * the answer came after the webhook's timeout (the service gave up on it first).
   */
  status: number;
  /** When the request arrived, and when it was answered (or closed). */
  arrivedAt: number;
  at: number;
}

export interface Receivers {
  url: string;
  posts: Post[];
  /** The replay steps whose messages the `/replay` endpoint answers 200. */
  replayHealthy: Set<number>;
  close(): Promise<void>;
}

export async function startReceivers(seed: number): Promise<Receivers> {
  const random = seededRandom(seed ^ 0x7ec);
  // A source of its own: /flaky's draws stay the seed's.
  const slowRandom = seededRandom(seed ^ 0x510);
  const sockets = new Set<Socket>();
  const r: Receivers = { url: '', posts: [], replayHealthy: new Set(), close: async () => undefined };
  const server = createServer((req, res) => {
    const arrivedAt = Date.now();
    readDelivery(req, ({ messageId, marker }) => {
      const path = (req.url ?? '').split('?')[0];
      const answer = (status: number, afterMs = 0, late = false) =>
        setTimeout(() => {
          r.posts.push({ path, messageId, marker, status: late ? 0 : status, arrivedAt, at: Date.now() });
          if (status === 0) req.socket.destroy();
          else if (!res.writableEnded && !req.socket.destroyed) res.writeHead(status).end(status < 300 ? 'ok' : 'failure on purpose');
        }, afterMs);
      if (path === '/dead') return answer(500);
      if (path === '/slow') return answer(200, 50 + slowRandom() * 150);
      if (path === '/replay') return answer(r.replayHealthy.has(Number(/^rp(\d+)\./.exec(marker)?.[1] ?? -1)) ? 200 : 500);
      if (path === '/flaky') {
        const p = random();
        if (p < 0.5) return answer(200);
        if (p < 0.65) return answer(500);
        if (p < 0.8) return answer(200, 300 + random() * 700);
        if (p < 0.9) return answer(200, 6000, true);
        return answer(0);
      }
      return answer(200);
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
  r.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  r.close = async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((ok) => server.close(() => ok()));
  };
  return r;
}
