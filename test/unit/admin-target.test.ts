import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdminError, metaTableFromOutputs, resolveTarget } from '../../bin/admin-target';
import { parseScopes } from '../../bin/admin-keys';
import { parseLimits } from '../../bin/admin-limits';
import { readStateFile, removeStateFile, stateFilePath, writeStateFile, type LocalState } from '../../local/state-file';

const state: LocalState = { pid: 4242, port: 8080, dynamodbEndpoint: 'http://127.0.0.1:9000', tables: { meta: 'msg-meta' } };
const noState = () => undefined;

function adminError(fn: () => unknown): AdminError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(AdminError);
    return e as AdminError;
  }
  throw new Error('expected an AdminError');
}

describe('metaTableFromOutputs', () => {
  it('reads the MetaTableName output of the stack', () => {
    expect(metaTableFromOutputs({ Messaging: { ApiUrl: 'https://x', MetaTableName: 'Messaging-Meta-1' } })).toBe('Messaging-Meta-1');
  });

  it('finds an output declared inside a construct by its suffixed logical id', () => {
    expect(metaTableFromOutputs({ Messaging: { TablesMetaTableName1A2B3C4D: 'T' } })).toBe('T');
  });

  it('asks for --stack when several stacks carry the output, and uses the one named', () => {
    const outputs = { Dev: { MetaTableName: 'dev-meta' }, Prod: { MetaTableName: 'prod-meta' } };
    expect(adminError(() => metaTableFromOutputs(outputs)).message).toMatch(/choose one with --stack NAME/);
    expect(metaTableFromOutputs(outputs, 'Prod')).toBe('prod-meta');
  });

  it('says how to produce the output when it is missing', () => {
    expect(adminError(() => metaTableFromOutputs({ Messaging: { ApiUrl: 'x' } })).message).toMatch(/--outputs-file cdk-outputs.json, or pass --meta-table/);
    expect(adminError(() => metaTableFromOutputs({ Messaging: {} }, 'Other')).message).toMatch(/no stack named Other; stacks in it: Messaging/);
    expect(adminError(() => metaTableFromOutputs(null)).message).toMatch(/not a cdk outputs file/);
  });
});

describe('resolveTarget', () => {
  it('finds the local runtime on port 8080 by default', () => {
    const seen: number[] = [];
    const t = resolveTarget({}, {}, (p) => (seen.push(p), state), () => true);
    expect(seen).toEqual([8080]);
    expect(t).toMatchObject({ kind: 'endpoint', endpoint: 'http://127.0.0.1:9000', metaTable: 'msg-meta' });
  });

  it('looks for the runtime on --port', () => {
    const seen: number[] = [];
    resolveTarget({ port: '24567' }, {}, (p) => (seen.push(p), { ...state, port: p }), () => true);
    expect(seen).toEqual([24567]);
  });

  it('says to start npm start when no runtime wrote a state file', () => {
    expect(adminError(() => resolveTarget({}, {}, noState)).message).toMatch(/no local runtime found on port 8080 .*start it with `npm start`/);
  });

  it('recognises the state file of a runtime that is gone', () => {
    expect(adminError(() => resolveTarget({}, {}, () => state, () => false)).message).toMatch(/pid 4242\) is no longer running; start it/);
  });

  it('looks for the runtime on PORT when no --port is given, as npm start does (--port wins)', () => {
    const seen: number[] = [];
    resolveTarget({}, { PORT: '24568' }, (p) => (seen.push(p), { ...state, port: p }), () => true);
    resolveTarget({ port: '24569' }, { PORT: '24568' }, (p) => (seen.push(p), { ...state, port: p }), () => true);
    expect(seen).toEqual([24568, 24569]);
  });

  it('takes the region of a deployed stack from its outputs (ApiUrl), before AWS_REGION; --region wins', () => {
    const dir = mkdtempSync(join(tmpdir(), 'admin-region-'));
    const file = join(dir, 'cdk-outputs.json');
    writeFileSync(file, JSON.stringify({ 'MessagingService-dev': { ApiUrl: 'https://abc123.execute-api.eu-west-2.amazonaws.com/api/v1', MetaTableName: 'T' } }));
    expect(resolveTarget({ outputs: file }, { AWS_REGION: 'us-east-1' }, noState)).toMatchObject({ kind: 'aws', region: 'eu-west-2' });
    expect(resolveTarget({ outputs: file, region: 'ap-south-1' }, {}, noState)).toMatchObject({ region: 'ap-south-1' });
    writeFileSync(file, JSON.stringify({ S: { SqsQueueUrlBase: 'https://sqs.ca-central-1.amazonaws.com/123456789012/', MetaTableName: 'T' } }));
    expect(resolveTarget({ outputs: file }, {}, noState)).toMatchObject({ region: 'ca-central-1' });
  });

  it('refuses a --port that is not a port with status 2', () => {
    expect(adminError(() => resolveTarget({ port: 'http' }, {}, noState)).exitCode).toBe(2);
  });

  it('uses MSG_DYNAMODB_ENDPOINT before any state file, with MSG_META_TABLE or the local table name', () => {
    expect(resolveTarget({}, { MSG_DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000' }, noState)).toMatchObject({ kind: 'endpoint', endpoint: 'http://127.0.0.1:8000', metaTable: 'msg-meta' });
    expect(resolveTarget({}, { MSG_DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000', MSG_META_TABLE: 'm' }, noState)).toMatchObject({ metaTable: 'm' });
  });

  it('targets AWS with --meta-table or MSG_META_TABLE, in the region given', () => {
    expect(resolveTarget({ 'meta-table': 'Stack-Meta', region: 'eu-west-1' }, {}, noState)).toMatchObject({ kind: 'aws', metaTable: 'Stack-Meta', region: 'eu-west-1' });
    expect(resolveTarget({}, { MSG_META_TABLE: 'Env-Meta', AWS_REGION: 'us-west-2' }, noState)).toMatchObject({ kind: 'aws', metaTable: 'Env-Meta', region: 'us-west-2' });
  });

  it('lets flags win over the environment', () => {
    const env = { MSG_DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000' };
    expect(resolveTarget({ 'meta-table': 'Stack-Meta' }, env, noState)).toMatchObject({ kind: 'aws', metaTable: 'Stack-Meta' });
    expect(resolveTarget({ endpoint: 'http://127.0.0.1:7000' }, env, noState)).toMatchObject({ kind: 'endpoint', endpoint: 'http://127.0.0.1:7000' });
    // --port names a local runtime: an endpoint or table left in the environment (an earlier admin
    // run in the same process points MSG_DYNAMODB_ENDPOINT at its own target) does not override it.
    const local = resolveTarget({ port: '24570' }, { ...env, MSG_META_TABLE: 'Env-Meta' }, (p) => ({ ...state, port: p }), () => true);
    expect(local).toMatchObject({ kind: 'endpoint', endpoint: state.dynamodbEndpoint });
    expect(local.describe).toMatch(/^local runtime on port 24570/);
  });

  it('reads the table of a deployed stack from --outputs', () => {
    const dir = mkdtempSync(join(tmpdir(), 'admin-outputs-'));
    const file = join(dir, 'cdk-outputs.json');
    writeFileSync(file, JSON.stringify({ Messaging: { MetaTableName: 'Messaging-Meta-9' } }));
    expect(resolveTarget({ outputs: file }, {}, noState)).toMatchObject({ kind: 'aws', metaTable: 'Messaging-Meta-9' });
    expect(adminError(() => resolveTarget({ outputs: join(dir, 'missing.json') }, {}, noState)).message).toMatch(/cannot read --outputs .*ENOENT.*cdk deploy --outputs-file/);
    writeFileSync(file, '{not json');
    expect(adminError(() => resolveTarget({ outputs: file }, {}, noState)).message).toMatch(/is not JSON/);
  });

  it('refuses --outputs together with --meta-table, and an endpoint that is not a URL', () => {
    expect(adminError(() => resolveTarget({ outputs: 'x.json', 'meta-table': 't' }, {}, noState)).exitCode).toBe(2);
    expect(adminError(() => resolveTarget({ endpoint: 'localhost:8000' }, {}, noState)).message).toMatch(/not an http\(s\) URL/);
  });
});

describe('state file', () => {
  it('round-trips the state of a port and is removed only by the process that wrote it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'admin-state-'));
    const mine = { ...state, pid: process.pid, port: 31000 };
    expect(writeStateFile(mine, dir)).toBe(stateFilePath(31000, dir));
    expect(readStateFile(31000, dir)).toEqual(mine);
    writeStateFile({ ...state, port: 31001 }, dir);
    removeStateFile(31001, dir);
    expect(readStateFile(31001, dir)).toBeDefined();
    removeStateFile(31000, dir);
    expect(readStateFile(31000, dir)).toBeUndefined();
  });
});

describe('admin arguments', () => {
  it('parses scopes, dropping duplicates and blanks', () => {
    expect(parseScopes('publish, consume,publish,')).toEqual(['publish', 'consume']);
    expect(parseScopes('*')).toEqual(['*']);
  });

  it.each([[undefined], [''], ['read'], ['publish,all']])('refuses the scopes %j with status 2', (raw) => {
    expect(adminError(() => parseScopes(raw)).exitCode).toBe(2);
  });

  it('parses limits given as whole numbers and ignores the ones not given', () => {
    expect(parseLimits({ publish: '10', management: '3' })).toEqual({ publish: 10, management: 3 });
    expect(parseLimits({})).toBeUndefined();
  });

  it.each([['0'], ['-1'], ['1.5'], ['1e3'], ['']])('refuses the limit %j', (raw) => {
    expect(adminError(() => parseLimits({ consume: raw })).message).toMatch(/--consume .* is not a limit/);
  });
});
