/**
 * Which DynamoDB the admin CLI (bin/admin.ts) talks to: a running local runtime (found by its
 * state file, local/state-file.ts), an explicit endpoint, or the metadata table of a deployed
 * stack (by name, or from the outputs file of `cdk deploy --outputs-file`, which also names the
 * usage plan that new keys join, bin/admin-usage-plan.ts); pointing the storage modules at it; and
 * turning SDK failures into messages that say what to do.
 */
import { readFileSync } from 'node:fs';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { isAlive, readStateFile, stateFilePath, type LocalState } from '../local/state-file';
import { TABLES } from '../lambda/core/storage/tables';
import { SQS_QUEUE_PREFIX_OUTPUT, SQS_QUEUE_URL_BASE_OUTPUT, USAGE_PLAN_ID_OUTPUT } from '../lib/stack-outputs';
import { resetConfig } from '../lambda/core/config';
import { resetClients } from '../lambda/core/storage/client';
import { resetSqsClient } from '../lambda/core/adapters/sqs';

/** A failure the user can fix; the message says how. */
export class AdminError extends Error {
  constructor(
    message: string,
    /** Exit status: 2 for a wrong command line, 1 for anything else. */
    readonly exitCode: 1 | 2 = 1,
  ) {
    super(message);
    this.name = 'AdminError';
  }
}

export interface TargetFlags {
  endpoint?: string;
  'meta-table'?: string;
  outputs?: string;
  stack?: string;
  region?: string;
  port?: string;
  'usage-plan'?: string;
}

/** Where the SQS queues of service queues are: an endpoint (local), or a stack's prefix and URL base. */
interface SqsTarget {
  endpoint?: string;
  prefix?: string;
  urlBase?: string;
}

export type Target =
  | { kind: 'endpoint'; endpoint: string; metaTable: string; describe: string; sqs: SqsTarget }
  | {
      kind: 'aws';
      metaTable: string;
      region?: string;
      /** The stack's usage plan (UsagePlanId output): `key create` adds the key's twin to it. */
      usagePlanId?: string;
      describe: string;
      sqs: SqsTarget;
    };

/** The name of the stack output that carries the metadata table's name (lib/messaging-stack.ts). */
const META_TABLE_OUTPUT = 'MetaTableName';

/**
 * Reads the metadata table's name from a `cdk deploy --outputs-file` JSON
 * (`{ "<stack>": { "<output>": "<value>" } }`). An output declared inside a construct gets a
 * suffixed logical id (`TablesMetaTableName1A2B3C4D`), so any key containing the name counts.
 * @example metaTableFromOutputs({ Messaging: { MetaTableName: 'Messaging-Meta1-XYZ' } }) // 'Messaging-Meta1-XYZ'
 */
export function metaTableFromOutputs(outputs: unknown, stack?: string, file = 'the outputs file'): string {
  if (!outputs || typeof outputs !== 'object') throw new AdminError(`${file} is not a cdk outputs file; write one with npx cdk deploy --outputs-file cdk-outputs.json`);
  const stacks = Object.entries(outputs as Record<string, Record<string, unknown>>).filter(([name]) => !stack || name === stack);
  const found = stacks.flatMap(([name, outs]) =>
    Object.entries(outs ?? {})
      .filter(([key, value]) => key.includes(META_TABLE_OUTPUT) && typeof value === 'string')
      .map(([, value]) => ({ stack: name, table: value as string })),
  );
  if (found.length === 1) return found[0].table;
  if (found.length === 0) {
    throw new AdminError(
      stack && stacks.length === 0
        ? `${file} has no stack named ${stack}; stacks in it: ${Object.keys(outputs).join(', ') || 'none'}`
        : `${file} has no ${META_TABLE_OUTPUT} output; deploy the stack with npx cdk deploy --outputs-file cdk-outputs.json, or pass --meta-table NAME`,
    );
  }
  throw new AdminError(`${file} holds several stacks with a ${META_TABLE_OUTPUT} output (${found.map((f) => f.stack).join(', ')}); choose one with --stack NAME`);
}

/**
 * Reads the usage plan id (output UsagePlanId) from a `cdk deploy --outputs-file` JSON; undefined
 * when the file has none (a stack deployed before the output existed).
 * @example usagePlanIdFromOutputs({ Messaging: { UsagePlanId: 'ab12cd' } }) // 'ab12cd'
 */
export function usagePlanIdFromOutputs(outputs: unknown, stack?: string): string | undefined {
  if (!outputs || typeof outputs !== 'object') return undefined;
  const found = Object.entries(outputs as Record<string, Record<string, unknown>>)
    .filter(([name]) => !stack || name === stack)
    .flatMap(([, outs]) => Object.entries(outs ?? {}).filter(([key, value]) => key.includes(USAGE_PLAN_ID_OUTPUT) && typeof value === 'string'))
    .map(([, value]) => value as string);
  // Several stacks: metaTableFromOutputs has already asked for --stack.
  return found.length === 1 ? found[0] : undefined;
}

/** A string output of the stack whose key contains `name`, if exactly one. */
function outputOf(outputs: unknown, name: string, stack?: string): string | undefined {
  if (!outputs || typeof outputs !== 'object') return undefined;
  const found = Object.entries(outputs as Record<string, Record<string, unknown>>)
    .filter(([s]) => !stack || s === stack)
    .flatMap(([, outs]) => Object.entries(outs ?? {}).filter(([key, value]) => key.includes(name) && typeof value === 'string'));
  return found.length === 1 ? (found[0][1] as string) : undefined;
}

/**
 * The region of the deployed stack, from its outputs: the `ApiUrl`
 * (https://ID.execute-api.REGION.amazonaws.com/...) or the `SqsQueueUrlBase`
 * (https://sqs.REGION.amazonaws.com/ACCOUNT/), so the CLI talks to the stack's region without
 * AWS_REGION on every command.
 */
function regionFromOutputs(outputs: unknown, stack?: string): string | undefined {
  const api = outputOf(outputs, 'ApiUrl', stack)?.match(/\.execute-api\.([a-z0-9-]+)\.amazonaws\.com/)?.[1];
  return api ?? outputOf(outputs, SQS_QUEUE_URL_BASE_OUTPUT, stack)?.match(/^https:\/\/sqs\.([a-z0-9-]+)\.amazonaws\.com/)?.[1];
}

function readOutputsFile(path: string, stack?: string): { metaTable: string; usagePlanId?: string; region?: string; sqs: SqsTarget } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new AdminError(`cannot read --outputs ${path} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); write it with npx cdk deploy --outputs-file ${path}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new AdminError(`--outputs ${path} is not JSON; write it with npx cdk deploy --outputs-file ${path}`);
  }
  return {
    metaTable: metaTableFromOutputs(json, stack, `--outputs ${path}`),
    usagePlanId: usagePlanIdFromOutputs(json, stack),
    region: regionFromOutputs(json, stack),
    sqs: { prefix: outputOf(json, SQS_QUEUE_PREFIX_OUTPUT, stack), urlBase: outputOf(json, SQS_QUEUE_URL_BASE_OUTPUT, stack) },
  };
}

function checkEndpoint(endpoint: string, source: string): string {
  try {
    const url = new URL(endpoint);
    if (url.protocol === 'http:' || url.protocol === 'https:') return endpoint;
  } catch {
    // fall through to the error below
  }
  throw new AdminError(`${source}=${endpoint} is not an http(s) URL; give one like http://127.0.0.1:8000`, 2);
}

function localPort(raw: string | undefined): number {
  const port = Number(raw ?? 8080);
  if (!Number.isInteger(port) || port <= 0 || port > 65535) throw new AdminError(`--port ${raw} is not a TCP port; give the PORT the local runtime serves on (--port or PORT; default 8080)`, 2);
  return port;
}

/**
 * Picks the target. Flags win over the environment: `--endpoint`, else `--outputs` or
 * `--meta-table` (a deployed stack), else the local runtime on `--port` when given, else
 * MSG_DYNAMODB_ENDPOINT, else MSG_META_TABLE (deployed), else the local runtime on PORT or 8080.
 */
export function resolveTarget(
  flags: TargetFlags,
  env: NodeJS.ProcessEnv,
  readState: (port: number) => LocalState | undefined = readStateFile,
  alive: (s: LocalState) => boolean = isAlive,
): Target {
  if (flags.outputs && flags['meta-table']) throw new AdminError('give either --outputs or --meta-table, not both', 2);
  const fromOutputs = flags.outputs ? readOutputsFile(flags.outputs, flags.stack) : undefined;
  const flagTable = fromOutputs?.metaTable ?? flags['meta-table'];
  // The stack's own region (from its outputs) before the shell's: a deployed stack lives in one.
  const region = flags.region ?? fromOutputs?.region ?? (env.AWS_REGION || env.AWS_DEFAULT_REGION || undefined);
  const usagePlanId = flags['usage-plan'] ?? fromOutputs?.usagePlanId ?? (env.MSG_USAGE_PLAN_ID || undefined);
  const envSqs: SqsTarget = {
    ...(env.MSG_SQS_ENDPOINT ? { endpoint: env.MSG_SQS_ENDPOINT } : {}),
    ...(env.MSG_SQS_QUEUE_PREFIX ? { prefix: env.MSG_SQS_QUEUE_PREFIX } : {}),
    ...(env.MSG_SQS_QUEUE_URL_BASE ? { urlBase: env.MSG_SQS_QUEUE_URL_BASE } : {}),
  };
  const aws = (metaTable: string, source: string) => ({
    kind: 'aws' as const,
    metaTable,
    region,
    sqs: { ...envSqs, ...fromOutputs?.sqs },
    ...(usagePlanId ? { usagePlanId } : {}),
    describe: `AWS table ${metaTable}${source}${region ? ` in ${region}` : ''}${usagePlanId ? `, usage plan ${usagePlanId}` : ''}`,
  });
  const localOnly = (what: string) => {
    if (flags['usage-plan']) {
      throw new AdminError(`--usage-plan applies to a deployed stack only, not to ${what}: drop it, or target the stack with --outputs FILE or --meta-table NAME`, 2);
    }
  };

  if (flags.endpoint) {
    localOnly(`--endpoint ${flags.endpoint}`);
    const endpoint = checkEndpoint(flags.endpoint, '--endpoint');
    const metaTable = flagTable ?? (env.MSG_META_TABLE || TABLES.meta.localName);
    return { kind: 'endpoint', endpoint, metaTable, describe: `DynamoDB at ${endpoint}, table ${metaTable}`, sqs: envSqs };
  }
  if (flagTable) return aws(flagTable, '');
  // An explicit --port names the local runtime: it wins over the environment's targets too.
  if (flags.port === undefined && env.MSG_DYNAMODB_ENDPOINT) {
    localOnly('MSG_DYNAMODB_ENDPOINT');
    const endpoint = checkEndpoint(env.MSG_DYNAMODB_ENDPOINT, 'MSG_DYNAMODB_ENDPOINT');
    const metaTable = env.MSG_META_TABLE || TABLES.meta.localName;
    return { kind: 'endpoint', endpoint, metaTable, describe: `DynamoDB at ${endpoint} (MSG_DYNAMODB_ENDPOINT), table ${metaTable}`, sqs: envSqs };
  }
  if (flags.port === undefined && env.MSG_META_TABLE) return aws(env.MSG_META_TABLE, ' (MSG_META_TABLE)');

  localOnly('the local runtime');
  // `PORT=N npm start` serves on N; the same PORT finds it here (--port wins).
  const port = localPort(flags.port ?? (env.PORT || undefined));
  const state = readState(port);
  const how =
    'start it with `npm start` (PORT=N npm start for another port, then pass --port N), or target a deployed stack with --outputs cdk-outputs.json or --meta-table NAME';
  if (!state) throw new AdminError(`no local runtime found on port ${port} (no ${stateFilePath(port)}); ${how}`);
  if (!alive(state)) throw new AdminError(`the local runtime on port ${port} (pid ${state.pid}) is no longer running; ${how}`);
  const metaTable = state.tables.meta ?? TABLES.meta.localName;
  return {
    kind: 'endpoint',
    endpoint: state.dynamodbEndpoint,
    metaTable,
    describe: `local runtime on port ${port} (DynamoDB ${state.dynamodbEndpoint}, table ${metaTable}${state.sqsEndpoint ? `, SQS ${state.sqsEndpoint}` : ''})`,
    // With --port the runtime's own state says everything: SQS settings an earlier target left in
    // the environment (useTarget writes them) are not this runtime's.
    sqs: { ...(flags.port === undefined ? envSqs : {}), ...(state.sqsEndpoint ? { endpoint: state.sqsEndpoint } : {}) },
  };
}

/** Points the storage modules (which read lambda/core/config.ts) at the target. */
export async function useTarget(target: Target) {
  process.env.MSG_META_TABLE = target.metaTable;
  if (target.kind === 'endpoint') {
    process.env.MSG_DYNAMODB_ENDPOINT = target.endpoint;
  } else {
    delete process.env.MSG_DYNAMODB_ENDPOINT;
    if (target.region) process.env.AWS_REGION = target.region;
    else {
      // config() would fall back to us-east-1; a profile's region is what the user means.
      const probe = new DynamoDBClient({});
      try {
        process.env.AWS_REGION = await probe.config.region();
      } catch {
        throw new AdminError('no AWS region configured: pass --region REGION, set AWS_REGION, or set a region in your AWS profile (aws configure)');
      } finally {
        probe.destroy();
      }
    }
  }
  const sqsEnv = { MSG_SQS_ENDPOINT: target.sqs.endpoint, MSG_SQS_QUEUE_PREFIX: target.sqs.prefix, MSG_SQS_QUEUE_URL_BASE: target.sqs.urlBase };
  for (const [k, v] of Object.entries(sqsEnv)) {
    if (v) process.env[k] = v;
    else delete process.env[k];
  }
  resetConfig();
  resetClients();
  resetSqsClient();
}

/** Turns an SDK failure into a message that says what to do. */
export function explain(e: unknown, target: Target): string {
  const err = e as { name?: string; code?: string; message?: string; cause?: { code?: string } };
  const code = err.code ?? err.cause?.code;
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'ECONNRESET' || code === 'ETIMEDOUT') {
    return target.kind === 'aws'
      ? `cannot reach DynamoDB in ${process.env.AWS_REGION} (${code}); check your network connection and the region (--region or AWS_REGION)`
      : `cannot reach DynamoDB (${target.describe}): ${code}; start the local runtime with npm start, or check --endpoint/MSG_DYNAMODB_ENDPOINT`;
  }
  if (err.name === 'ResourceNotFoundException') {
    return `table ${target.metaTable} does not exist (${target.describe}); check --meta-table, --outputs and the region (--region or AWS_REGION)`;
  }
  if (err.name === 'CredentialsProviderError' || /credential/i.test(err.message ?? '')) {
    return 'no usable AWS credentials: configure them (aws configure, AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)';
  }
  if (['UnrecognizedClientException', 'AccessDeniedException', 'ExpiredTokenException', 'InvalidSignatureException'].includes(err.name ?? '')) {
    return `AWS refused the request (${err.name}: ${err.message}); check that your credentials are current and may read and write table ${target.metaTable}`;
  }
  return `${err.name ?? 'Error'}: ${err.message ?? String(e)} (${target.describe})`;
}
