/**
 * The webhook HTTP client (lambda/webhooks/storage/http-delivery.ts) against real local servers: outcomes
 * and their one-line reasons, the timeout over the whole exchange, the capped response read,
 * keep-alive reuse, the SSRF guard on every connection, and TLS with a custom CA, a client
 * certificate and verify_ssl, using certificates made by openssl for this run.
 */
import { basename, dirname } from 'node:path';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { closeAgents, sendRequest, type OutgoingRequest } from '../../lambda/webhooks/storage/http-delivery';
import { setResolver } from '../../lambda/webhooks/storage/target-guard';
import { resetConfig } from '../../lambda/core/config';
import { MAX_RESPONSE_BYTES } from '../../lambda/webhooks/rules/templates';
import { makeTestPki, type TestPki } from '../fixtures/tls';
import { scaled } from '../fixtures/time-scale';

jest.setTimeout(20_000);

interface Listening {
  server: Server;
  url: string;
  connections: number;
  /** Bytes of response body the huge route wrote before its client went away. */
  hugeWritten: number;
  close(): Promise<void>;
}

/** Routes of the plain receiver, by path. */
function route(req: IncomingMessage, res: ServerResponse, state: Listening) {
  const body: Buffer[] = [];
  req.on('data', (c: Buffer) => body.push(c));
  req.on('end', () => {
    switch (req.url) {
      case '/echo':
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ method: req.method, headers: req.headers, body: Buffer.concat(body).toString('base64') }));
        return;
      case '/fail':
        res.writeHead(500).end('broken on purpose');
        return;
      case '/redirect':
        res.writeHead(302, { location: '/echo' }).end('moved');
        return;
      case '/slow-headers':
        const late = setTimeout(() => !res.destroyed && res.writeHead(200).end('late'), 5000);
        res.on('close', () => clearTimeout(late));
        return;
      case '/slow-body':
        res.writeHead(200).write('a beginning and then nothing');
        return;
      case '/huge': {
        // Writes 64 KiB chunks until 64 MiB or until the client goes away.
        res.writeHead(200);
        const chunk = Buffer.alloc(64 * 1024, 'x');
        const pump = () => {
          while (!res.destroyed && state.hugeWritten < 64 * 1024 * 1024) {
            state.hugeWritten += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          if (!res.destroyed) res.end();
        };
        pump();
        return;
      }
      case '/hang-up':
        req.socket.destroy();
        return;
      default:
        res.writeHead(200).end('ok');
    }
  });
}

async function listen(server: Server, state: Omit<Listening, 'server' | 'url' | 'close'>, scheme = 'http'): Promise<Listening> {
  const sockets = new Set<Socket>();
  server.on('connection', (s: Socket) => {
    state.connections += 1;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    server,
    url: `${scheme}://127.0.0.1:${port}`,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  });
}

function plainReceiver(): Promise<Listening> {
  const state = { connections: 0, hugeWritten: 0 } as Listening;
  return listen(createServer((req, res) => route(req, res, state)), state);
}

const post = (url: string, extra: Partial<OutgoingRequest> = {}): OutgoingRequest => ({
  url,
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: Buffer.from('{"hello":"world"}'),
  timeoutSeconds: 5,
  ...extra,
});

let plain: Listening;
beforeAll(async () => {
  plain = await plainReceiver();
});
afterAll(async () => {
  await closeAgents();
  await plain.close();
});

describe('sendRequest over http', () => {
  it('sends the method, headers and exact body bytes, and reports a 2xx as success', async () => {
    const body = Buffer.from('{"émoji":"🚀"}');
    const r = await sendRequest(post(`${plain.url}/echo`, { method: 'PATCH', headers: { 'x-custom': 'v1', 'content-type': 'application/json' }, body }));
    expect(r).toMatchObject({ ok: true, status_code: 200, error: null });
    const seen = JSON.parse(r.response);
    expect(seen.method).toBe('PATCH');
    expect(seen.headers).toMatchObject({ 'x-custom': 'v1', 'content-length': String(body.length) });
    expect(Buffer.from(seen.body, 'base64').equals(body)).toBe(true);
  });

  it('reports a 500 as "HTTP 500" with the body for {{.response}}', async () => {
    expect(await sendRequest(post(`${plain.url}/fail`))).toMatchObject({ ok: false, status_code: 500, error: 'HTTP 500', response: 'broken on purpose' });
  });

  it('refuses a redirect without following it', async () => {
    const before = plain.connections;
    const r = await sendRequest(post(`${plain.url}/redirect`));
    expect(r).toMatchObject({ ok: false, status_code: 302, error: 'redirect refused' });
    // The pooled connection may be reused, but no second request was answered with the echo.
    expect(r.response).toBe('moved');
    expect(plain.connections - before).toBeLessThanOrEqual(1);
  });

  it('times out while waiting for headers, within about the timeout', async () => {
    const r = await sendRequest(post(`${plain.url}/slow-headers`, { timeoutSeconds: 1 }));
    expect(r).toMatchObject({ ok: false, status_code: null, error: 'timeout after 1 s' });
    expect(r.duration_ms).toBeGreaterThanOrEqual(950);
    expect(r.duration_ms).toBeLessThan(scaled(2500));
  });

  it('counts a 2xx whose body trickles past the timeout as delivered, with the body read so far', async () => {
    // The receiver answered 2xx: it has the message. Calling it a timeout would POST it again.
    const r = await sendRequest(post(`${plain.url}/slow-body`, { timeoutSeconds: 1 }));
    expect(r).toMatchObject({ ok: true, status_code: 200, error: null, response: 'a beginning and then nothing' });
    expect(r.duration_ms).toBeLessThan(scaled(2500));
  });

  it('reads at most 4 KiB of a huge answer and hangs up on the rest', async () => {
    const r = await sendRequest(post(`${plain.url}/huge`, { timeoutSeconds: 10 }));
    expect(r).toMatchObject({ ok: true, status_code: 200 });
    expect(Buffer.byteLength(r.response)).toBe(MAX_RESPONSE_BYTES);
    // The receiver could write its 64 MiB only if the client kept reading.
    await new Promise((res) => setTimeout(res, 200));
    expect(plain.hugeWritten).toBeLessThan(16 * 1024 * 1024);
  });

  it('reports a refused connection', async () => {
    const closed = await plainReceiver();
    const url = closed.url;
    await closed.close();
    expect(await sendRequest(post(`${url}/x`))).toMatchObject({ ok: false, status_code: null, error: 'connection refused' });
  });

  it('reports a receiver that hangs up without answering', async () => {
    expect(await sendRequest(post(`${plain.url}/hang-up`))).toMatchObject({ ok: false, status_code: null, error: 'connection reset' });
  });

  it('keeps connections alive across deliveries', async () => {
    const own = await plainReceiver();
    try {
      for (let i = 0; i < 5; i++) expect((await sendRequest(post(`${own.url}/ok`))).ok).toBe(true);
      expect(own.connections).toBe(1);
    } finally {
      await own.close();
    }
  });
});

describe('sendRequest with private targets refused', () => {
  beforeAll(async () => {
    process.env.MSG_ALLOW_PRIVATE_WEBHOOK_TARGETS = 'false';
    resetConfig();
    await closeAgents();
    setResolver(async (host) => {
      if (host === 'inside.test') return [{ address: '127.0.0.1', family: 4 }];
      throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    });
  });
  afterAll(async () => {
    setResolver(undefined);
    await closeAgents();
    process.env.MSG_ALLOW_PRIVATE_WEBHOOK_TARGETS = 'true';
    resetConfig();
  });

  it('connects to no address the guard did not check: a host resolving to 127.0.0.1 gets no request', async () => {
    const before = plain.connections;
    const port = new URL(plain.url).port;
    const r = await sendRequest(post(`http://inside.test:${port}/echo`));
    expect(r).toMatchObject({ ok: false, status_code: null, error: 'target address not allowed (not a public address)' });
    expect(plain.connections).toBe(before);
  });

  it('refuses an IP literal before any connection', async () => {
    const before = plain.connections;
    expect(await sendRequest(post(`${plain.url}/echo`))).toMatchObject({ ok: false, error: 'target address not allowed (not a public address)', duration_ms: 0 });
    expect(plain.connections).toBe(before);
  });

  it('reports a host that does not resolve', async () => {
    expect(await sendRequest(post('http://nowhere.test/x'))).toMatchObject({ ok: false, error: 'host not found' });
  });
});

describe('sendRequest over https', () => {
  let pki: TestPki;
  let signed: Listening;
  let selfSigned: Listening;
  let mutual: Listening;

  const tlsReceiver = (options: Parameters<typeof createHttpsServer>[0]) => {
    const state = { connections: 0, hugeWritten: 0 } as Listening;
    const server = createHttpsServer(options, (req, res) => {
      const peer = (req.socket as TLSSocket).getPeerCertificate();
      res.writeHead(200).end(peer?.subject ? `client ${peer.subject.CN}` : 'no client certificate');
    });
    // https.Server counts TLS connections on 'secureConnection'; 'connection' counts TCP ones.
    return listen(server as unknown as Server, state, 'https');
  };

  beforeAll(async () => {
    pki = makeTestPki();
    signed = await tlsReceiver({ cert: pki.serverCert, key: pki.serverKey });
    selfSigned = await tlsReceiver({ cert: pki.selfSignedCert, key: pki.selfSignedKey });
    mutual = await tlsReceiver({ cert: pki.serverCert, key: pki.serverKey, ca: pki.ca, requestCert: true, rejectUnauthorized: true });
  });
  afterAll(async () => {
    await closeAgents();
    await Promise.all([signed.close(), selfSigned.close(), mutual.close()]);
    pki.remove();
  });

  it('refuses a certificate no trusted CA signed', async () => {
    const r = await sendRequest(post(`${signed.url}/`));
    expect(r).toMatchObject({ ok: false, status_code: null });
    expect(r.error).toMatch(/^TLS error: (UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY)$/);
  });

  it('trusts the webhook\'s own CA (ca_cert)', async () => {
    expect(await sendRequest(post(`${signed.url}/`, { tls: { ca_cert: pki.ca } }))).toMatchObject({ ok: true, status_code: 200, response: 'no client certificate' });
  });

  it('refuses a self-signed certificate, unless verify_ssl is false', async () => {
    const refused = await sendRequest(post(`${selfSigned.url}/`, { tls: { ca_cert: pki.ca } }));
    expect(refused.error).toBe('TLS error: DEPTH_ZERO_SELF_SIGNED_CERT');
    expect(await sendRequest(post(`${selfSigned.url}/`, { tls: { verify_ssl: false } }))).toMatchObject({ ok: true, status_code: 200 });
  });

  it('presents the client certificate to a receiver that requires one', async () => {
    const without = await sendRequest(post(`${mutual.url}/`, { tls: { ca_cert: pki.ca } }));
    expect(without).toMatchObject({ ok: false, status_code: null });
    expect(without.error).toMatch(/^(TLS error: \S+|connection reset)$/);
    const withCert = await sendRequest(post(`${mutual.url}/`, { tls: { ca_cert: pki.ca, client_cert: pki.clientCert, client_key: pki.clientKey } }));
    expect(withCert).toMatchObject({ ok: true, status_code: 200, response: 'client webhook-client' });
  });

  it('reads TLS material from files where the operator allows it (the local runtime)', async () => {
    process.env.MSG_WEBHOOK_TLS_FILE_PATHS = 'true';
    // Files must be under the namespace's folder of the allowed directory (test/unit/tls-files.test.ts).
    const tlsDir = dirname(dirname(pki.paths.ca));
    const ns = basename(dirname(pki.paths.ca));
    process.env.MSG_WEBHOOK_TLS_DIR = tlsDir;
    resetConfig();
    try {
      const tls = { ca_cert: pki.paths.ca, client_cert: pki.paths.clientCert, client_key: pki.paths.clientKey };
      expect(await sendRequest(post(`${mutual.url}/`, { tls, namespace: ns }))).toMatchObject({ ok: true, response: 'client webhook-client' });
      // Another namespace names the same files: refused, and no pooled connection of the first is reused.
      expect(await sendRequest(post(`${mutual.url}/`, { tls, namespace: 'another-namespace' }))).toMatchObject({ ok: false, status_code: null });
    } finally {
      delete process.env.MSG_WEBHOOK_TLS_FILE_PATHS;
      delete process.env.MSG_WEBHOOK_TLS_DIR;
      resetConfig();
    }
  });

  it('keeps one pool per TLS setting: a connection made with one client certificate serves only that setting', async () => {
    const before = mutual.connections;
    const tls = { ca_cert: pki.ca, client_cert: pki.clientCert, client_key: pki.clientKey };
    for (let i = 0; i < 3; i++) expect((await sendRequest(post(`${mutual.url}/`, { tls }))).ok).toBe(true);
    // Reused from the previous tests' pool for this setting, or one new connection.
    expect(mutual.connections - before).toBeLessThanOrEqual(1);
    expect((await sendRequest(post(`${mutual.url}/`, { tls: { ca_cert: pki.ca } }))).ok).toBe(false);
  });
});
