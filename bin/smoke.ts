/**
 * `npm run smoke`: a post-deploy check of a running service (docs/deploy.md "Smoke test of a deployed stack").
 *
 *   npm run smoke -- --outputs cdk-outputs.json [--stack NAME] [--webhook-url URL]
 *   npm run smoke -- --url https://.../api/v1 --key KEY [--webhook-url URL]
 *   npm run smoke -- --port 8080                 (the local runtime of npm start)
 *
 * With --outputs or --port it makes a throwaway namespace and a `*` key with the admin CLI (so it
 * needs the same AWS credentials as `npm run admin`), and revokes the key at the end (the admin
 * CLI has no namespace delete: the empty namespace `smoke-…` stays). With --url and --key it
 * works inside that key's namespace, under names no one else uses. Either way it round-trips a
 * queue (publish, consume, ack, batch ack, a consume right after the create), a stream, a
 * subscription, a webhook test delivery (with --webhook-url only), topics with encoded
 * characters, a 7 MB body (413), a wrong method (405), and deletes what it created. One line per
 * check, a summary, exit status 1 when any check failed.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { API_URL_OUTPUT } from '../lib/stack-outputs';

export interface SmokeOptions {
  baseUrl: string;
  key: string;
  webhookUrl?: string;
  out?: (line: string) => void;
}

export interface SmokeResult {
  passed: number;
  failed: number;
  skipped: number;
}

interface Res {
  status: number;
  headers: Headers;
  body: any;
}

class CheckFailed extends Error {}

const expectThat = (ok: boolean, what: string) => {
  if (!ok) throw new CheckFailed(what);
};

/** Runs every check against `baseUrl` with `key`; never throws for a failed check. */
export async function smoke({ baseUrl, key, webhookUrl, out = (l) => process.stdout.write(`${l}\n`) }: SmokeOptions): Promise<SmokeResult> {
  const base = baseUrl.replace(/\/+$/, '');
  const id = randomBytes(4).toString('hex');
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Res> => {
    const res = await fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: any;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = { raw: text.slice(0, 200) };
    }
    return { status: res.status, headers: res.headers, body: parsed };
  };
  const want = (res: Res, status: number, what: string) =>
    expectThat(res.status === status, `${what}: expected ${status}, got ${res.status} ${JSON.stringify(res.body?.error ?? res.body).slice(0, 300)}`);

  const result: SmokeResult = { passed: 0, failed: 0, skipped: 0 };
  const check = async (name: string, fn: () => Promise<string | void>) => {
    const started = Date.now();
    try {
      const note = await fn();
      result.passed++;
      out(`ok    ${name} (${Date.now() - started} ms)${note ? ` ${note}` : ''}`);
    } catch (e) {
      result.failed++;
      out(`FAIL  ${name}: ${(e as Error).message}`);
    }
  };
  const skip = (name: string, why: string) => {
    result.skipped++;
    out(`skip  ${name}: ${why}`);
  };
  /** Consumes until `n` messages came or 20 s passed. */
  const consumeQueue = async (queue: string, n: number) => {
    const got: any[] = [];
    for (const end = Date.now() + 20_000; got.length < n && Date.now() < end; ) {
      const res = await call('POST', `/queues/${queue}/messages/consume`, { max_messages: 10, timeout_seconds: 2 });
      want(res, 200, 'consume');
      got.push(...res.body.data.messages);
    }
    return got;
  };

  const q = `smoke-q-${id}`;
  const s = `smoke-s-${id}`;
  const sub = `smoke-u-${id}`;
  const enc = `smoke-e-${id}`;
  const created: string[] = [];

  await check('namespace: GET /namespace answers with the key’s namespace', async () => {
    const res = await call('GET', '/namespace');
    want(res, 200, 'GET /namespace');
    return `namespace ${res.body.data?.name ?? res.body.data?.namespace ?? '?'}`;
  });

  await check('queue: a consume right after the create answers 200', async () => {
    want(await call('POST', '/queues', { name: q, topic_filter: `smoke/${id}/q/#` }), 201, 'create queue');
    created.push(`/queues/${q}`);
    want(await call('POST', `/queues/${q}/messages/consume`, { max_messages: 1, timeout_seconds: 0 }), 200, 'consume right after create');
  });

  await check('queue: publish, consume, ack', async () => {
    want(await call('POST', `/topics/smoke/${id}/q/one/messages`, { payload: 'one' }), 201, 'publish');
    const [m] = await consumeQueue(q, 1);
    expectThat(m?.payload === 'one', `consumed ${JSON.stringify(m?.payload)}, expected "one"`);
    want(await call('POST', `/queues/${q}/messages/${encodeURIComponent(m.message_id)}/ack`, { receipt_handle: m.receipt_handle }), 200, 'ack');
  });

  await check('queue: batch publish, consume, batch ack', async () => {
    want(await call('POST', `/topics/smoke/${id}/q/two/messages/batch`, { messages: [{ payload: 'a' }, { payload: 'b' }] }), 201, 'batch publish');
    const got = await consumeQueue(q, 2);
    expectThat(got.length === 2, `consumed ${got.length} of 2 messages`);
    const res = await call('POST', `/queues/${q}/messages/ack`, { entries: got.map((m) => ({ message_id: m.message_id, receipt_handle: m.receipt_handle })) });
    want(res, 200, 'batch ack');
  });

  await check('stream: publish, consume from earliest, commit', async () => {
    want(await call('POST', '/streams', { name: s, topic_filter: `smoke/${id}/s/#` }), 201, 'create stream');
    created.push(`/streams/${s}`);
    want(await call('POST', `/topics/smoke/${id}/s/x/messages`, { payload: 'streamed' }), 201, 'publish');
    let messages: any[] = [];
    let next = 0;
    for (const end = Date.now() + 20_000; messages.length === 0 && Date.now() < end; ) {
      const res = await call('POST', `/streams/${s}/messages/consume`, { consumer_group: 'smoke', start_offset: 'earliest', timeout_seconds: 2 });
      want(res, 200, 'consume');
      messages = res.body.data.messages;
      next = res.body.data.next_offset;
    }
    expectThat(messages[0]?.payload === 'streamed', `consumed ${JSON.stringify(messages.map((m) => m.payload))}`);
    want(await call('POST', `/streams/${s}/offsets/commit`, { consumer_group: 'smoke', offset: next }), 200, 'commit');
  });

  await check('subscription: publish, consume', async () => {
    want(await call('POST', '/subscriptions', { name: sub, topic_filter: `smoke/${id}/u/#` }), 201, 'create subscription');
    created.push(`/subscriptions/${sub}`);
    want(await call('POST', `/topics/smoke/${id}/u/x/messages`, { payload: 'subscribed' }), 201, 'publish');
    let messages: any[] = [];
    for (const end = Date.now() + 20_000; messages.length === 0 && Date.now() < end; ) {
      const res = await call('POST', `/subscriptions/${sub}/messages/consume`, { subscriber_id: 'smoke', timeout_seconds: 2 });
      want(res, 200, 'consume');
      messages = res.body.data.messages;
    }
    expectThat(messages[0]?.payload === 'subscribed', `consumed ${JSON.stringify(messages.map((m) => m.payload))}`);
  });

  if (webhookUrl) {
    await check('webhook: POST /webhooks/test delivers to --webhook-url', async () => {
      const res = await call('POST', '/webhooks/test', { name: `smoke-w-${id}`, url: webhookUrl, topic_filter: `smoke/${id}/w/#` });
      want(res, 200, 'webhook test');
      return JSON.stringify(res.body.data).slice(0, 120);
    });
  } else skip('webhook: POST /webhooks/test', 'no --webhook-url given');

  await check('topics with encoded characters (space, :, %, non-ASCII, encoded /) reach their queue', async () => {
    want(await call('POST', '/queues', { name: enc, topic_filter: `smoke/${id}/e/#` }), 201, 'create queue');
    created.push(`/queues/${enc}`);
    const topics = ['eu west', 'a:b', '100%', 'café', 'x/y'];
    for (const t of topics) {
      const path = `/topics/smoke/${id}/e/${t === 'x/y' ? 'x%2Fy' : encodeURIComponent(t)}/messages`;
      want(await call('POST', path, { payload: t }), 201, `publish to ${t}`);
    }
    const got = (await consumeQueue(enc, topics.length)).map((m) => m.payload).sort();
    expectThat(JSON.stringify(got) === JSON.stringify([...topics].sort()), `received ${JSON.stringify(got)}`);
  });

  await check('a 7 MB body answers 413 MESSAGE_TOO_LARGE in the envelope (the size guard)', async () => {
    const res = await call('POST', `/topics/smoke/${id}/big/messages`, { payload: 'x'.repeat(7 * 1024 * 1024) });
    want(res, 413, '7 MB publish');
    expectThat(res.body?.error?.code === 'MESSAGE_TOO_LARGE', `code ${res.body?.error?.code}`);
  });

  await check('a wrong method answers 405 METHOD_NOT_ALLOWED (JSON and text bodies)', async () => {
    const json = await call('DELETE', '/namespace');
    want(json, 405, 'DELETE /namespace');
    const text = await call('PUT', '/queues', 'plain text', { 'content-type': 'text/plain' });
    want(text, 405, 'PUT /queues with a text body');
    expectThat(text.body?.error?.code === 'METHOD_NOT_ALLOWED', `code ${text.body?.error?.code}`);
  });

  await check('cleanup: delete every resource made here', async () => {
    for (const path of created.reverse()) want(await call('DELETE', path), 200, `DELETE ${path}`);
  });
  return result;
}

/** The API URL of the stack in a `cdk deploy --outputs-file` file. */
export function apiUrlFromOutputs(file: string, stack?: string): string {
  const all = JSON.parse(readFileSync(file, 'utf8')) as Record<string, Record<string, string>>;
  const stacks = Object.entries(all).filter(([name, o]) => o[API_URL_OUTPUT] && (!stack || name === stack));
  if (stacks.length !== 1) {
    throw new Error(`${file} has ${stacks.length} stacks with an ${API_URL_OUTPUT} output${stack ? ` named ${stack}` : ''}; pass --stack NAME`);
  }
  return stacks[0][1][API_URL_OUTPUT];
}

const USAGE = `Usage: npm run smoke -- (--outputs cdk-outputs.json [--stack NAME] | --url API_URL --key KEY | --port N) [--webhook-url URL]`;

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { outputs: { type: 'string' }, stack: { type: 'string' }, url: { type: 'string' }, key: { type: 'string' }, port: { type: 'string' }, 'webhook-url': { type: 'string' }, help: { type: 'boolean' } },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  let baseUrl = values.url;
  let key = values.key;
  let cleanupKey: (() => Promise<void>) | undefined;
  if (!baseUrl || !key) {
    if (!values.outputs && !values.port) {
      process.stderr.write(`error: give --outputs, --port, or --url with --key\n${USAGE}\n`);
      return 2;
    }
    baseUrl ??= values.outputs ? apiUrlFromOutputs(values.outputs, values.stack) : `http://127.0.0.1:${values.port}/api/v1`;
    const target = values.outputs ? ['--outputs', values.outputs, ...(values.stack ? ['--stack', values.stack] : [])] : ['--port', values.port!];
    const { run } = await import('./admin');
    const ns = `smoke-${randomBytes(4).toString('hex')}`;
    const lines: string[] = [];
    const admin = async (...args: string[]) => {
      lines.length = 0;
      const code = await run([...args, ...target, '--json'], { out: (l) => lines.push(l), err: () => undefined });
      if (code !== 0) throw new Error(`npm run admin -- ${args.join(' ')} failed (exit ${code}): ${lines.join(' ')}`);
      return JSON.parse(lines.join('\n'));
    };
    await admin('namespace', 'create', ns);
    const created = await admin('key', 'create', ns, '--scopes', '*', '--description', 'npm run smoke (revoked at its end)');
    key = created.key as string;
    process.stdout.write(`smoke: namespace ${ns}, key ${created.key_id} (revoked at the end), ${baseUrl}\n`);
    cleanupKey = async () => {
      await admin('key', 'revoke', ns, created.key_id);
    };
    // A new key reaches the authorizer at once, but its usage-plan twin can take a moment in AWS.
    for (const end = Date.now() + 60_000; Date.now() < end; ) {
      const res = await fetch(`${baseUrl.replace(/\/+$/, '')}/namespace`, { headers: { authorization: `Bearer ${key}` } });
      if (res.status !== 401) break;
      await new Promise((r) => setTimeout(r, 2_000));
    }
  }
  const result = await smoke({ baseUrl, key, webhookUrl: values['webhook-url'] });
  if (cleanupKey) {
    try {
      await cleanupKey();
      result.passed++;
      process.stdout.write('ok    cleanup: key revoked\n');
    } catch (e) {
      result.failed++;
      process.stdout.write(`FAIL  cleanup: key not revoked: ${(e as Error).message}\n`);
    }
  }
  process.stdout.write(`smoke: ${result.passed} passed, ${result.failed} failed, ${result.skipped} skipped\n`);
  return result.failed ? 1 : 0;
}

// Checked by path because this file is also compiled to CommonJS by jest, where import.meta is absent.
if (/[\\/]bin[\\/]smoke\.ts$/.test(process.argv[1] ?? '')) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e) => {
      process.stderr.write(`smoke failed to run: ${(e as Error).message}\n`);
      process.exit(1);
    },
  );
}
