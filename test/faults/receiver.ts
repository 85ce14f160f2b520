/**
 * The webhook receiver of the fault suite: answers a seeded share of deliveries with 500 (so the
 * retry workflow runs), the rest with 200, and records every request by message id.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { seededRandom } from './injector';

export interface Delivery {
  messageId: string;
  marker: string;
  status: number;
  at: number;
}

export interface FaultReceiver {
  url: string;
  deliveries: Delivery[];
  close(): Promise<void>;
}

/**
 * Reads a default-body delivery and hands over its message id and the workload's marker (`m` of
 * the JSON payload); both empty when the body is not one (the checks count it as unknown).
 */
export function readDelivery(req: IncomingMessage, then: (d: { messageId: string; marker: string }) => void): void {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    let messageId = '';
    let marker = '';
    try {
      const b = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { message_id: string; payload: string };
      messageId = b.message_id;
      marker = (JSON.parse(b.payload) as { m: string }).m;
    } catch {
      // Recorded with empty ids.
    }
    then({ messageId, marker });
  });
}

export async function startFaultReceiver(seed: number, failShare: number): Promise<FaultReceiver> {
  const random = seededRandom(seed);
  const deliveries: Delivery[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    readDelivery(req, ({ messageId, marker }) => {
      const status = random() < failShare ? 500 : 200;
      deliveries.push({ messageId, marker, status, at: Date.now() });
      res.writeHead(status).end(status === 200 ? 'ok' : 'failure on purpose');
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/hook`,
    deliveries,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
