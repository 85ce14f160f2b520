/**
 * Example: a webhook receiver that verifies every delivery with the `standardwebhooks` package
 * (the Standard Webhooks headers `webhook-id`, `webhook-timestamp`, `webhook-signature` that the
 * service sends with every delivery) before trusting it. A request with a missing or wrong
 * signature, or a timestamp more than 5 minutes off, is answered 401 and ignored. Any 2xx answer
 * tells the service the delivery succeeded; anything else makes it retry.
 *
 *   WEBHOOK_SECRET=whsec_... npx tsx examples/webhook-receiver.ts 9000    # the secret create returned
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { Webhook } from 'standardwebhooks';
import { runAsScript, runMain } from './env';

/** The default delivery body (a webhook without `body_template`). */
export interface Delivery {
  topic: string;
  payload: string;
  timestamp: string;
  message_id: string;
  properties: Record<string, string>;
}

export interface ReceiverOptions {
  /** The webhook's `secret` (`whsec_...`), returned once by `POST /webhooks`. */
  secret: string;
  /** Called with each verified delivery and its `webhook-id` (stable across retries: deduplicate on it). */
  onDelivery: (delivery: Delivery, webhookId: string) => Promise<void> | void;
  /** Called with each refused request's reason. */
  onRefused?: (reason: string) => void;
  /** @default 0 (a free port) */
  port?: number;
  /** @default 127.0.0.1 */
  host?: string;
}

const readBody = (req: IncomingMessage) =>
  new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });

export async function startWebhookReceiver(o: ReceiverOptions): Promise<{ url: string; server: Server; close(): Promise<void> }> {
  const verifier = new Webhook(o.secret);
  const server = createServer(async (req, res) => {
    const raw = await readBody(req);
    // The signature covers the body before compression (webhook `compression: gzip`).
    const body = req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
    let delivery: Delivery;
    try {
      delivery = verifier.verify(body.toString('utf8'), req.headers as Record<string, string>) as Delivery;
    } catch (e) {
      o.onRefused?.((e as Error).message);
      res.writeHead(401).end();
      return;
    }
    try {
      await o.onDelivery(delivery, String(req.headers['webhook-id']));
      res.writeHead(204).end();
    } catch {
      res.writeHead(500).end(); // the service retries with backoff
    }
  });
  await new Promise<void>((r) => server.listen(o.port ?? 0, o.host ?? '127.0.0.1', () => r()));
  const { port } = server.address() as { port: number };
  return {
    url: `http://${o.host ?? '127.0.0.1'}:${port}/webhook`,
    server,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

if (runAsScript('webhook-receiver.ts')) {
  runMain(async () => {
    const secret = process.env.WEBHOOK_SECRET;
    if (!secret) throw new Error('set WEBHOOK_SECRET to the secret POST /webhooks returned');
    const r = await startWebhookReceiver({
      secret,
      port: Number(process.argv[2] ?? 9000),
      onDelivery: (d, id) => console.log(`${id} ${d.topic}: ${d.payload}`),
      onRefused: (why) => console.error(`refused: ${why}`),
    });
    console.log(`verifying webhook deliveries at ${r.url}`);
  });
}
