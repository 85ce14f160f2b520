/**
 * The webhook benches' receiver: a local HTTP server that answers 200 after `delayMs` and reports
 * each delivery's message id when it answers (bench/webhooks.ts, bench/webhooks-neighbours.ts).
 */
import { createServer, type Server } from 'node:http';

export function receiver(onDelivery: (messageId: string) => void, delayMs = 0): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const answer = () => {
        res.writeHead(200).end('ok');
        onDelivery((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { message_id: string }).message_id);
      };
      if (delayMs > 0) setTimeout(answer, delayMs);
      else answer();
    });
  });
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r({ url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`, server })));
}
