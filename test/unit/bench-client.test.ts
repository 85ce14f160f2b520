/**
 * The bench's HTTP client (bench/harness.ts `benchClient`) against a loopback server that resets a
 * kept connection when a request arrives on it, as a Node server does when it closes an idle kept
 * connection just as the client writes to it (the webhooks bench ended on that ECONNRESET).
 */
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { benchClient } from '../../bench/harness';

/** A server answering `{"data":n}`; a request for which `reset` (its number on its connection, the connection's number) is true resets the connection instead. */
async function server(reset: (requestOnConnection: number, connection: number) => boolean) {
  let connections = 0;
  const counts = new WeakMap<Socket, { n: number; id: number }>();
  const srv: Server = createServer((req, res) => {
    const c = counts.get(req.socket)!;
    c.n += 1;
    req.resume();
    req.on('end', () => {
      if (reset(c.n, c.id)) req.socket.resetAndDestroy();
      else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: c.n }));
    });
  });
  srv.on('connection', (s: Socket) => counts.set(s, { n: 0, id: ++connections }));
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(srv.address() as { port: number }).port}`;
  return {
    url,
    connections: () => connections,
    close: () => {
      srv.closeAllConnections();
      return new Promise<void>((r) => srv.close(() => r()));
    },
  };
}

describe('benchClient', () => {
  it('sends a request again on a new connection when a reused one is reset before any answer', async () => {
    // The second request on the first connection is reset, as by a server closing it for idleness.
    const s = await server((n, id) => id === 1 && n === 2);
    const { call, agent } = benchClient(s.url, 'k');
    try {
      expect((await call('POST', '/x', { a: 1 })).body.data).toBe(1);
      const again = await call('POST', '/x', { a: 2 });
      expect(again.status).toBe(200);
      // Answered on a second connection, as its first request.
      expect(again.body.data).toBe(1);
      expect(s.connections()).toBe(2);
    } finally {
      agent.destroy();
      await s.close();
    }
  });

  it('fails a request reset on a new connection (nothing to retry)', async () => {
    const s = await server(() => true);
    const { call, agent } = benchClient(s.url, 'k');
    try {
      await expect(call('POST', '/x', { a: 1 })).rejects.toMatchObject({ code: 'ECONNRESET' });
      expect(s.connections()).toBe(1);
    } finally {
      agent.destroy();
      await s.close();
    }
  });
});
