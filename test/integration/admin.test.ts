/**
 * The admin CLI against DynamoDB Local: in process through its exported `run`, and once as the
 * program `npm run admin` starts, to prove the entry point and exit status.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { run } from '../../bin/admin';
import { hashApiKey } from '../../lambda/core/rules/auth';
import { findActiveKey, listApiKeys } from '../../lambda/namespaces/storage/api-keys';
import { getNamespace } from '../../lambda/namespaces/storage/namespaces';
import { removeStateFile, writeStateFile } from '../../local/state-file';
import { freePort } from '../../local/dynamodb';

const ROOT = resolve(__dirname, '../..');

async function admin(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await run(argv, { out: (l) => out.push(l), err: (l) => err.push(l), env: process.env });
  return { code, out: out.join('\n'), err: err.join('\n') };
}
const json = async (...argv: string[]) => {
  const r = await admin(...argv, '--json');
  expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: expect.any(String) });
  return JSON.parse(r.out);
};
const nsName = () => `adm-${randomBytes(4).toString('hex')}`;

describe('admin CLI: namespaces', () => {
  it('creates a namespace with limits and lists it', async () => {
    const name = nsName();
    const created = await admin('namespace', 'create', name, '--publish', '10');
    expect(created).toMatchObject({ code: 0, out: expect.stringContaining(`created namespace ${name}`) });
    expect(await getNamespace(name)).toMatchObject({ name, status: 'active', limits: { publish: 10 } });
    // The list reads the resourcesByKind index, which lags behind the create in AWS (and locally,
    // local/aws-harsh/dynamodb.ts): a namespace shows within about a second (docs/aws-parity.md).
    let list: any[] = [];
    for (const end = Date.now() + 10_000; !list.some((n) => n.name === name) && Date.now() < end; ) list = await json('namespace', 'list');
    expect(list).toContainEqual(expect.objectContaining({ name, status: 'active', limits: expect.objectContaining({ publish: { limit: 10, default: false } }) }));
  });

  it('refuses to create a namespace twice', async () => {
    const name = nsName();
    await admin('namespace', 'create', name);
    const again = await admin('namespace', 'create', name);
    expect(again.code).toBe(1);
    expect(again.err).toMatch(/already exists; change its limits with npm run admin -- limits set/);
  });

  it.each([['Upper'], ['dash-'], ['a_b'], ['x'.repeat(64)]])('refuses the invalid namespace name %s with status 2', async (bad) => {
    const r = await admin('namespace', 'create', bad);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/not a valid namespace name: use a lowercase DNS label/);
    expect(await getNamespace(bad)).toBeUndefined();
  });
});

describe('admin CLI: keys', () => {
  const ns = nsName();
  beforeAll(async () => {
    expect((await admin('namespace', 'create', ns)).code).toBe(0);
  });

  it('prints a new key once and stores only its hash', async () => {
    const own = nsName();
    await admin('namespace', 'create', own);
    const r = await admin('key', 'create', own, '--scopes', 'publish,consume', '--description', 'ci bot');
    expect(r.code).toBe(0);
    const key = /key \(shown only now[^:]*\): (\S+)/.exec(r.out)?.[1] as string;
    expect(key).toBeDefined();
    expect(r.out.split(key).length - 1).toBe(1);

    const stored = await listApiKeys(own);
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ hash: hashApiKey(key), scopes: ['publish', 'consume'], description: 'ci bot' });
    expect(JSON.stringify(stored)).not.toContain(key);
  });

  it('creates a key the authorizer accepts, and revoking it makes the authorizer refuse it', async () => {
    const created = await json('key', 'create', ns, '--scopes', '*');
    expect(await findActiveKey(created.key)).toMatchObject({ namespace: ns, scopes: ['*'], key_id: created.key_id });

    const revoked = await admin('key', 'revoke', ns, created.key_id);
    expect(revoked).toMatchObject({ code: 0, out: expect.stringContaining(`revoked key ${created.key_id}`) });
    expect(await findActiveKey(created.key)).toBeUndefined();

    const listed = await json('key', 'list', ns);
    expect(listed).toContainEqual(expect.objectContaining({ key_id: created.key_id, scopes: ['*'], revoked_at: expect.stringMatching(/Z$/) }));
  });

  it('lists key ids, scopes and dates but never the key or its hash', async () => {
    const created = await json('key', 'create', ns, '--scopes', 'manage');
    for (const format of [[], ['--json']]) {
      const r = await admin('key', 'list', ns, ...format);
      expect(r.code).toBe(0);
      expect(r.out).toContain(created.key_id);
      expect(r.out).not.toContain(created.key);
      expect(r.out).not.toContain(hashApiKey(created.key));
    }
    const row = (await json('key', 'list', ns)).find((k: { key_id: string }) => k.key_id === created.key_id);
    expect(Object.keys(row).sort()).toEqual(['created_at', 'description', 'key_id', 'revoked_at', 'scopes']);
    expect(row).toMatchObject({ scopes: ['manage'], revoked_at: null, created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) });
  });

  it.each([
    [['key', 'create', ns], /needs --scopes/],
    [['key', 'create', ns, '--scopes', 'publish,admin'], /unknown scope "admin"/],
    [['key', 'create', ns, '--scopes', ','], /unknown scope/],
    [['key', 'list', ns, '--scopes', 'publish'], /--scopes does not apply to key list/],
    [['key', 'revoke', ns], /key revoke takes <namespace> <key-id>/],
  ])('refuses %j with status 2 and says what to give', async (argv, message) => {
    const r = await admin(...(argv as string[]));
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
  });

  it('answers 1 with a hint for a key of a namespace that does not exist', async () => {
    const r = await admin('key', 'create', nsName(), '--scopes', '*');
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/does not exist; .*namespace create/);
  });

  it('answers 1 when revoking an unknown key id', async () => {
    const r = await admin('key', 'revoke', ns, 'no-such-key');
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/has no key no-such-key; list its key ids with npm run admin -- key list/);
  });
});

describe('admin CLI: limits', () => {
  it('sets limits, merging with those already set, and shows defaults for the rest', async () => {
    const ns = nsName();
    await admin('namespace', 'create', ns, '--consume', '50');
    expect(await json('limits', 'get', ns)).toEqual({
      namespace: ns,
      limits: {
        publish: { limit: 1000, default: true }, consume: { limit: 50, default: false }, management: { limit: 100, default: true }, fanout: { limit: 100_000, default: true },
        portal: { limit: 100, default: true },
      },
    });
    expect((await admin('limits', 'set', ns, '--publish', '7', '--management', '3')).code).toBe(0);
    expect((await getNamespace(ns))?.limits).toEqual({ publish: 7, consume: 50, management: 3 });
    expect((await admin('limits', 'get', ns)).out).toBe(`limits of ${ns} per minute: publish 7, consume 50, management 3, fanout 100000 (default) writes, portal 100 (default) per application`);
    expect((await admin('limits', 'set', ns, '--fanout', '5000')).code).toBe(0);
    expect((await getNamespace(ns))?.limits).toEqual({ publish: 7, consume: 50, management: 3, fanout: 5000 });
    expect((await admin('limits', 'get', ns)).out).toBe(`limits of ${ns} per minute: publish 7, consume 50, management 3, fanout 5000 writes, portal 100 (default) per application`);
    expect((await admin('limits', 'set', ns, '--portal', '40')).code).toBe(0);
    expect((await getNamespace(ns))?.limits).toEqual({ publish: 7, consume: 50, management: 3, fanout: 5000, portal: 40 });
    expect((await admin('limits', 'get', ns)).out).toBe(`limits of ${ns} per minute: publish 7, consume 50, management 3, fanout 5000 writes, portal 40 per application`);
  });

  it('refuses a fan-out budget that is not a whole number of writes', async () => {
    const r = await admin('limits', 'set', nsName(), '--fanout=0');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--fanout 0 is not a limit: give a whole number of writes per minute/);
  });

  it.each([['0'], ['-1'], ['1.5'], ['ten']])('refuses the limit %s with status 2', async (bad) => {
    const r = await admin('limits', 'set', nsName(), `--publish=${bad}`);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/is not a limit: give a whole number of requests per minute/);
  });

  it('needs at least one limit', async () => {
    const r = await admin('limits', 'set', nsName());
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/needs at least one of --publish N/);
  });
});

describe('admin CLI: finding the local runtime', () => {
  it('uses the DynamoDB endpoint in the state file of the runtime on --port', async () => {
    const port = await freePort();
    writeStateFile({ pid: process.pid, port, dynamodbEndpoint: process.env.MSG_DYNAMODB_ENDPOINT as string, tables: { meta: 'msg-meta' } });
    try {
      const ns = nsName();
      const out: string[] = [];
      const err: string[] = [];
      const code = await run(['--port', String(port), 'namespace', 'create', ns], { out: (l) => out.push(l), err: (l) => err.push(l), env: {} });
      expect({ code, err }).toEqual({ code: 0, err: [expect.stringContaining(`local runtime on port ${port}`)] });
      expect(await getNamespace(ns)).toBeDefined();
    } finally {
      removeStateFile(port);
    }
  });

  it('says to start npm start when no runtime serves the port', async () => {
    const port = await freePort();
    const err: string[] = [];
    const code = await run(['--port', String(port), 'namespace', 'list'], { out: () => undefined, err: (l) => err.push(l), env: {} });
    expect(code).toBe(1);
    expect(err.join('\n')).toMatch(new RegExp(`no local runtime found on port ${port} .*start it with \`npm start\``));
  });
});

describe('admin CLI as a program', () => {
  it('creates a key through the npm run admin entry point and exits 0', async () => {
    const ns = nsName();
    await admin('namespace', 'create', ns);
    // The same command line npm runs (`tsx bin/admin.ts`), on this Node (the project's Node 22).
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'bin/admin.ts', 'key', 'create', ns, '--scopes', 'consume', '--json'], {
      cwd: ROOT,
      env: process.env,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: expect.stringContaining('target: DynamoDB at') });
    const { key } = JSON.parse(r.stdout);
    expect(await findActiveKey(key)).toMatchObject({ namespace: ns, scopes: ['consume'] });
  }, 60_000);

  it('exits 2 with the usage for an unknown command', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'bin/admin.ts', 'frobnicate'], { cwd: ROOT, env: process.env, encoding: 'utf8', timeout: 60_000 });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/unknown command "frobnicate"[\s\S]*Usage: npm run admin --/);
  }, 60_000);
});
