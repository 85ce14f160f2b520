/**
 * The admin CLI: `npm run admin -- <command>`. Issues namespaces, API keys and per-namespace
 * limits (DESIGN.md sections 2 and 10) straight into the metadata table, through the same storage
 * modules the service uses, against a running local runtime or a deployed stack
 * (bin/admin-target.ts). A key is printed once at creation; only its SHA-256 hash is stored.
 * Against a deployed stack, `key create` also gives the key its usage-plan twin (an API Gateway
 * API key whose value is the hash) and `key revoke` deletes it (bin/admin-usage-plan.ts).
 */
import { parseArgs } from 'node:util';
import { AdminError, explain, resolveTarget, useTarget, type Target, type TargetFlags } from './admin-target';
import { COMMAND_HELP, commandUsage, groupUsage, usage } from './admin-help';
import { createProgress } from './admin-progress';
import { apiGatewayClient, createKeyTwin, deleteKeyTwins, usagePlanRequests, type ApiGatewaySender } from './admin-usage-plan';
import { generateApiKey, hashApiKey, KEY_SCOPES, NAMESPACE_NAME, type KeyScope } from '../lambda/domain/auth';
import { newId } from '../lambda/domain/clock';
import { isoTime } from '../lambda/domain/envelope';
import { DEFAULT_LIMITS } from '../lambda/domain/rate-limits';
import { DEFAULT_FANOUT_LIMIT } from '../lambda/domain/fanout-writes';
import { resetClients } from '../lambda/storage/client';
import { listApiKeys, putApiKey, revokeApiKey } from '../lambda/storage/api-keys';
import { createNamespace, getNamespace, listNamespaces, setNamespaceLimits, type Limits } from '../lambda/storage/namespaces';
import { STACK_NAME, USAGE_PLAN_ID_OUTPUT } from '../lib/stack-outputs';
import { portalCommands } from './admin-portal';

export const USAGE = usage();

const OPTIONS = {
  publish: { type: 'string' },
  consume: { type: 'string' },
  management: { type: 'string' },
  fanout: { type: 'string' },
  scopes: { type: 'string' },
  description: { type: 'string' },
  'to-topic': { type: 'string' },
  max: { type: 'string' },
  'dry-run': { type: 'boolean' },
  all: { type: 'boolean' },
  orphans: { type: 'boolean' },
  yes: { type: 'boolean' },
  namespace: { type: 'string' },
  'min-age': { type: 'string' },
  port: { type: 'string' },
  endpoint: { type: 'string' },
  outputs: { type: 'string' },
  stack: { type: 'string' },
  'meta-table': { type: 'string' },
  region: { type: 'string' },
  'usage-plan': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;
type Flags = { [K in keyof typeof OPTIONS]?: (typeof OPTIONS)[K]['type'] extends 'boolean' ? boolean : string };

const LIMIT_FLAGS = ['publish', 'consume', 'management', 'fanout'] as const;
type LimitFlag = (typeof LIMIT_FLAGS)[number];
/** Defaults per minute: requests by category, and `fanout` writes (lambda/domain/fanout-writes.ts). */
const LIMIT_DEFAULTS: Record<LimitFlag, number> = { ...DEFAULT_LIMITS, fanout: DEFAULT_FANOUT_LIMIT };
/** Command → [positional argument names, command-specific flags]. */
export const COMMANDS: Record<string, [string[], (keyof Flags)[]]> = {
  'namespace create': [['name'], [...LIMIT_FLAGS]],
  'namespace list': [[], []],
  'key create': [['namespace'], ['scopes', 'description']],
  'key list': [['namespace'], []],
  'key revoke': [['namespace', 'key-id'], []],
  'limits set': [['namespace'], [...LIMIT_FLAGS]],
  'limits get': [['namespace'], []],
  'schedule-limit set': [['namespace', 'limit'], []],
  'schedule-limit get': [['namespace'], []],
  'portal-origins set': [['namespace', 'origins'], []],
  'portal-origins get': [['namespace'], []],
  'portal-theme set': [['namespace', 'brand', 'logo'], []],
  'portal-theme get': [['namespace'], []],
  'resource-limit set': [['namespace', 'what', 'limit'], []],
  'resource-limit get': [['namespace'], []],
  'webhook-health set': [['namespace', 'what', 'value'], []],
  'webhook-health get': [['namespace'], []],
  redrive: [['namespace', 'queue'], ['to-topic', 'max', 'dry-run']],
  'sqs-queues list': [[], ['namespace']],
  'sqs-queues delete': [[], ['all', 'orphans', 'yes', 'namespace', 'min-age']],
};
const COMMAND_FLAGS = new Set<string>(['publish', 'consume', 'management', 'scopes', 'description', 'to-topic', 'max', 'dry-run', 'all', 'orphans', 'yes', 'namespace', 'min-age']);

export interface AdminIo {
  out(line: string): void;
  err(line: string): void;
  env: NodeJS.ProcessEnv;
  /** API Gateway client for a deployed stack's usage plan. @default one for the target's region */
  apiGateway: ApiGatewaySender;
}

interface Context {
  args: string[];
  flags: Flags;
  target: Target;
  /** The API Gateway client (deployed stacks only). */
  apiGateway(): ApiGatewaySender;
  print(human: string, json: unknown): void;
  /** Messages and progress (stderr): never mixed into the result on stdout. */
  err(line: string): void;
}

const usageError = (message: string) => new AdminError(`${message}\n\n${USAGE}`, 2);

function namespaceArg(name: string): string {
  if (!NAMESPACE_NAME.test(name)) {
    throw new AdminError(`"${name}" is not a valid namespace name: use a lowercase DNS label, 1 to 63 characters of a-z, 0-9 and "-", not starting or ending with "-"`, 2);
  }
  return name;
}

/** Parses `--scopes publish,consume` into known scopes, deduplicated. */
export function parseScopes(raw: string | undefined): KeyScope[] {
  if (!raw) throw new AdminError(`key create needs --scopes: a comma-separated list of ${KEY_SCOPES.join(', ')} (quote '*' in the shell)`, 2);
  const scopes = [...new Set(raw.split(',').map((s) => s.trim()).filter(Boolean))];
  const unknown = scopes.filter((s) => !(KEY_SCOPES as readonly string[]).includes(s));
  if (unknown.length || scopes.length === 0) {
    throw new AdminError(`unknown scope ${unknown.map((s) => `"${s}"`).join(', ') || '""'} in --scopes ${raw}; use a comma-separated list of ${KEY_SCOPES.join(', ')}`, 2);
  }
  return scopes as KeyScope[];
}

/** Reads `--publish/--consume/--management/--fanout` as positive integers; undefined when none is given. */
export function parseLimits(flags: Partial<Record<LimitFlag, string>>): Limits | undefined {
  const limits: Limits = {};
  for (const cat of LIMIT_FLAGS) {
    const raw = flags[cat];
    if (raw === undefined) continue;
    const n = Number(raw);
    if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n) || n < 1) {
      throw new AdminError(`--${cat} ${raw} is not a limit: give a whole number of ${cat === 'fanout' ? 'writes' : 'requests'} per minute, 1 or more`, 2);
    }
    limits[cat] = n;
  }
  return Object.keys(limits).length ? limits : undefined;
}

const effectiveLimits = (limits: Limits = {}) =>
  Object.fromEntries(LIMIT_FLAGS.map((c) => [c, { limit: limits[c] ?? LIMIT_DEFAULTS[c], default: limits[c] === undefined }]));
const limitsText = (limits?: Limits) =>
  LIMIT_FLAGS.map((c) => `${c} ${limits?.[c] ?? `${LIMIT_DEFAULTS[c]} (default)`}${c === 'fanout' ? ' writes' : ''}`).join(', ');

function table(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd()).join('\n');
}

async function mustExist(namespace: string) {
  const ns = await getNamespace(namespace);
  if (!ns) throw new AdminError(`namespace ${namespace} does not exist; list them with npm run admin -- namespace list, or create it with npm run admin -- namespace create ${namespace}`);
  return ns;
}

const handlers: Record<string, (c: Context) => Promise<void>> = {
  async 'namespace create'({ args: [name], flags, print }) {
    const limits = parseLimits(flags);
    const now = Date.now();
    if (!(await createNamespace(namespaceArg(name), now, limits))) {
      throw new AdminError(`namespace ${name} already exists; change its limits with npm run admin -- limits set ${name} --publish N`);
    }
    print(
      `created namespace ${name} (limits per minute: ${limitsText(limits)})\nnext: npm run admin -- key create ${name} --scopes '*'`,
      { name, status: 'active', created_at: isoTime(now), limits: effectiveLimits(limits) },
    );
  },

  async 'namespace list'({ print }) {
    const all = await listNamespaces();
    const rows = all.map((n) => [n.name, n.status, isoTime(n.created_at), limitsText(n.limits)]);
    print(
      all.length ? table([['NAME', 'STATUS', 'CREATED', 'LIMITS PER MINUTE'], ...rows]) : 'no namespaces yet; create one with npm run admin -- namespace create <name>',
      all.map((n) => ({ name: n.name, status: n.status, created_at: isoTime(n.created_at), limits: effectiveLimits(n.limits) })),
    );
  },

  async 'key create'({ args: [ns], flags, target, apiGateway, print }) {
    const scopes = parseScopes(flags.scopes);
    const usagePlanId = target.kind === 'aws' ? target.usagePlanId : undefined;
    if (target.kind === 'aws' && !usagePlanId) {
      throw new AdminError(
        "key create against a deployed stack needs the stack's usage plan (API Gateway answers 401 INVALID_API_KEY to a key without its usage-plan key): " +
          'pass --outputs cdk-outputs.json (written by npx cdk deploy --outputs-file cdk-outputs.json, with the UsagePlanId output) or --usage-plan ID ' +
          `(aws cloudformation describe-stacks --stack-name ${STACK_NAME} --query "Stacks[0].Outputs[?OutputKey=='${USAGE_PLAN_ID_OUTPUT}'].OutputValue" --output text)`,
      );
    }
    await mustExist(namespaceArg(ns));
    const key = generateApiKey(ns);
    const rec = { key_id: newId(), namespace: ns, scopes, created_at: Date.now(), ...(flags.description ? { description: flags.description } : {}) };
    // The usage-plan key first: if it cannot be made, nothing is stored and no key is shown.
    const twin = usagePlanId ? await createKeyTwin(apiGateway(), usagePlanId, { keyId: rec.key_id, hash: hashApiKey(key), namespace: ns }) : undefined;
    let stored = false;
    try {
      // A random 192-bit key cannot collide with a stored one; false would mean the impossible.
      stored = await putApiKey(key, rec);
    } finally {
      if (!stored && twin) await apiGateway().send(usagePlanRequests.deleteApiKey(twin)).catch(() => undefined);
    }
    if (!stored) throw new AdminError('a key with the same hash exists already; run the command again');
    print(
      `created key ${rec.key_id} in namespace ${ns} with scopes ${scopes.join(',')}\n` +
        (twin ? `API Gateway key ${twin} (value: the key's SHA-256 hash) added to usage plan ${usagePlanId}\n` : '') +
        `key (shown only now, store it safely; it cannot be shown again): ${key}`,
      {
        key_id: rec.key_id,
        namespace: ns,
        scopes,
        created_at: isoTime(rec.created_at),
        description: rec.description ?? null,
        ...(twin ? { usage_plan: { id: usagePlanId, api_key_id: twin } } : {}),
        key,
      },
    );
  },

  async 'key list'({ args: [ns], print }) {
    await mustExist(namespaceArg(ns));
    const keys = (await listApiKeys(ns)).sort((a, b) => a.created_at - b.created_at);
    // Only these fields: the hash stays in the table (and the key was never stored).
    const shown = keys.map((k) => ({
      key_id: k.key_id,
      scopes: k.scopes,
      created_at: isoTime(k.created_at),
      revoked_at: k.revoked_at ? isoTime(k.revoked_at) : null,
      description: k.description ?? null,
    }));
    const rows = shown.map((k) => [k.key_id, k.scopes.join(','), k.created_at, k.revoked_at ?? '-', k.description ?? '']);
    print(
      shown.length ? table([['KEY ID', 'SCOPES', 'CREATED', 'REVOKED', 'DESCRIPTION'], ...rows]) : `namespace ${ns} has no keys; create one with npm run admin -- key create ${ns} --scopes '*'`,
      shown,
    );
  },

  async 'key revoke'({ args: [ns, keyId], target, apiGateway, print }) {
    await mustExist(namespaceArg(ns));
    const now = Date.now();
    if (!(await revokeApiKey(ns, keyId, now))) {
      throw new AdminError(`namespace ${ns} has no key ${keyId}; list its key ids with npm run admin -- key list ${ns}`);
    }
    // The revocation in the table is what refuses the key; the usage-plan key goes with it.
    const deleted = target.kind === 'aws' ? await deleteKeyTwins(apiGateway(), keyId) : undefined;
    const twinText =
      deleted === undefined ? '' : deleted.length ? `; deleted its API Gateway key ${deleted.join(', ')}` : `; it had no API Gateway key (none named ${keyId})`;
    print(`revoked key ${keyId} of namespace ${ns}; requests with it now answer 401 INVALID_API_KEY${twinText}`, {
      key_id: keyId,
      namespace: ns,
      revoked_at: isoTime(now),
      ...(deleted ? { deleted_api_gateway_keys: deleted } : {}),
    });
  },

  async 'limits set'({ args: [ns], flags, print }) {
    const limits = parseLimits(flags);
    if (!limits) throw new AdminError('limits set needs at least one of --publish N, --consume N, --management N (requests per minute), --fanout N (writes per minute)', 2);
    await mustExist(namespaceArg(ns));
    const updated = await setNamespaceLimits(ns, limits);
    print(`limits of ${ns} per minute: ${limitsText(updated.limits)}`, { namespace: ns, limits: effectiveLimits(updated.limits) });
  },

  async 'limits get'({ args: [ns], print }) {
    const rec = await mustExist(namespaceArg(ns));
    print(`limits of ${ns} per minute: ${limitsText(rec.limits)}`, { namespace: ns, limits: effectiveLimits(rec.limits) });
  },

  async 'schedule-limit set'({ args: [ns, raw], print }) {
    const n = Number(raw);
    if (!/^\d+$/.test(raw ?? '') || !Number.isSafeInteger(n)) throw new AdminError(`${raw} is not a schedule limit: give a whole number of schedules, 0 or more`, 2);
    await mustExist(namespaceArg(ns));
    const { setScheduleLimit, scheduleCount } = await import('../lambda/storage/schedules');
    await setScheduleLimit(ns, n);
    const count = await scheduleCount(ns);
    print(`schedule limit of ${ns}: ${n} (it has ${count}; existing schedules stay, creates beyond the limit answer 409)`, { namespace: ns, schedule_limit: n, schedules: count });
  },

  async 'schedule-limit get'({ args: [ns], print }) {
    await mustExist(namespaceArg(ns));
    const { scheduleLimit, scheduleCount } = await import('../lambda/storage/schedules');
    const [limit, count] = await Promise.all([scheduleLimit(ns), scheduleCount(ns)]);
    print(`schedule limit of ${ns}: ${limit} (it has ${count})`, { namespace: ns, schedule_limit: limit, schedules: count });
  },

  ...portalCommands({ mustExist, namespaceArg }),

  async 'resource-limit set'({ args: [ns, what, raw], print }) {
    const { LIMIT_NAMES } = await import('../lambda/domain/resource-limits');
    const name = LIMIT_NAMES.find((n) => n === what);
    if (!name) throw new AdminError(`${what} is not a resource limit: give one of ${LIMIT_NAMES.join(', ')}`, 2);
    const n = Number(raw);
    if (!/^\d+$/.test(raw ?? '') || !Number.isSafeInteger(n)) throw new AdminError(`${raw} is not a limit: give a whole number, 0 or more`, 2);
    await mustExist(namespaceArg(ns));
    const { setNamespaceCap } = await import('../lambda/storage/resource-limits');
    await setNamespaceCap(ns, name, n);
    print(`${name} limit of ${ns}: ${n} (existing resources stay; creates beyond it answer 409 LIMIT_EXCEEDED)`, { namespace: ns, limit: name, value: n });
  },

  async 'resource-limit get'({ args: [ns], print }) {
    await mustExist(namespaceArg(ns));
    const { DEFAULT_LIMITS, KIND_OF_LIMIT } = await import('../lambda/domain/resource-limits');
    const { namespaceCaps, resourceCount } = await import('../lambda/storage/resource-limits');
    const { heldUsage } = await import('../lambda/storage/held-quota');
    const [caps, held] = await Promise.all([namespaceCaps(ns), heldUsage(ns)]);
    const kinds = Object.entries(KIND_OF_LIMIT);
    const counts: Record<string, number> = Object.fromEntries(await Promise.all(kinds.map(async ([name, kind]) => [name, await resourceCount(ns, kind)] as const)));
    counts['event-types'] = await (await import('../lambda/storage/event-types')).eventTypeCount(ns);
    const { applicationCount } = await import('../lambda/storage/applications');
    counts.applications = await applicationCount(ns);
    const holds: Record<string, number> = { 'held-messages': held.messages, 'held-bytes': held.bytes };
    const lines = Object.entries(caps).map(([name, limit]) => {
      const n = counts[name] ?? holds[name];
      const has = n !== undefined ? `, it ${name in holds ? 'holds' : 'has'} ${n}` : '';
      return `  ${name}: ${limit}${limit === DEFAULT_LIMITS[name as keyof typeof DEFAULT_LIMITS] ? ' (default)' : ''}${has}`;
    });
    print(`resource limits of ${ns}:\n${lines.join('\n')}`, { namespace: ns, limits: caps, counts, held });
  },

  async 'webhook-health set'({ args: [ns, what, raw], print }) {
    const { HEALTH_FIELDS, LIMIT_BOUNDS } = await import('../lambda/domain/endpoint-health');
    const field = HEALTH_FIELDS.find((f) => f === what);
    if (!field) throw new AdminError(`${what} is not a webhook health threshold: give one of ${HEALTH_FIELDS.join(', ')}`, 2);
    const [min, max] = LIMIT_BOUNDS[field];
    const n = Number(raw);
    if (raw !== 'default' && (!/^\d+$/.test(raw ?? '') || n < min || n > max)) {
      throw new AdminError(`${raw} is not a ${field}: give a whole number from ${min} to ${max}, or "default" to remove the namespace's own value`, 2);
    }
    await mustExist(namespaceArg(ns));
    const { setNamespaceHealthDefault } = await import('../lambda/storage/webhook-health');
    const value = raw === 'default' ? null : n;
    await setNamespaceHealthDefault(ns, field, value);
    print(
      value === null
        ? `${field} of ${ns}'s webhooks: the service's default again (webhooks that set their own keep it)`
        : `${field} of ${ns}'s webhooks: ${value} (webhooks that set their own keep it; running deliveries see it within 30 s)`,
      { namespace: ns, field, value },
    );
  },

  async 'webhook-health get'({ args: [ns], print }) {
    await mustExist(namespaceArg(ns));
    const { effectiveHealth } = await import('../lambda/domain/endpoint-health');
    const { namespaceHealthDefaults } = await import('../lambda/storage/webhook-health');
    const own = await namespaceHealthDefaults(ns);
    const eff = effectiveHealth({}, own);
    const lines = Object.entries(eff).map(([f, e]) => `  ${f}: ${e.value}${e.source === 'default' ? ' (default)' : ''}`);
    print(`webhook health thresholds of ${ns} (for webhooks that set none):\n${lines.join('\n')}`, {
      namespace: ns,
      thresholds: Object.fromEntries(Object.entries(eff).map(([f, e]) => [f, e.value])),
      sources: Object.fromEntries(Object.entries(eff).map(([f, e]) => [f, e.source])),
    });
  },

  async 'sqs-queues list'({ flags, print }) {
    const { runSqsQueues } = await import('./admin-sqs-queues');
    await runSqsQueues('list', flags, print, () => undefined);
  },

  async 'sqs-queues delete'({ flags, print, err }) {
    const { runSqsQueues } = await import('./admin-sqs-queues');
    await runSqsQueues('delete', flags, print, err);
  },

  async redrive({ args: [ns, queue], flags, print, err }) {
    await mustExist(namespaceArg(ns));
    // Loaded on demand: publishing pulls in every sink (SQS included) that no other command needs.
    const { runRedrive } = await import('./admin-redrive');
    await runRedrive(ns, queue, flags, process.env, print, createProgress({ label: 'redrive', unit: 'messages', write: err }));
  },
};

/** The help for the words before --help: one command's, a group's (`key`), or the whole usage. */
function helpFor([first, second]: string[]): string {
  if (first === undefined) return USAGE;
  const name = COMMAND_HELP[first] ? first : `${first} ${second ?? ''}`.trim();
  if (COMMAND_HELP[name]) return commandUsage(name);
  return groupUsage(first) ?? USAGE;
}

/**
 * Runs one admin command; resolves to the exit status (0 done, 1 failed, 2 wrong command line).
 * @example await run(['key', 'create', 'acme', '--scopes', 'publish,consume'])
 */
export async function run(argv: string[], io: Partial<AdminIo> = {}): Promise<number> {
  const out = io.out ?? ((l: string) => process.stdout.write(`${l}\n`));
  const err = io.err ?? ((l: string) => process.stderr.write(`${l}\n`));
  const env = io.env ?? process.env;
  let target: Target | undefined;
  let ownClient: { destroy(): void } | undefined;
  try {
    let parsed;
    try {
      parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
    } catch (e) {
      throw usageError((e as Error).message);
    }
    const flags = parsed.values as Flags;
    // `redrive` is one word; the other commands are `<group> <verb>`.
    const single = parsed.positionals[0] === 'redrive';
    const [group, verb, ...rest] = parsed.positionals;
    const args = single ? parsed.positionals.slice(1) : rest;
    if (flags.help || group === undefined || group === 'help') {
      out(helpFor(group === 'help' ? parsed.positionals.slice(1) : parsed.positionals));
      return 0;
    }
    const name = single ? group : `${group} ${verb ?? ''}`.trim();
    const spec = COMMANDS[name];
    if (!spec) throw usageError(`unknown command "${name}"`);
    const [params, allowed] = spec;
    if (args.length !== params.length) throw usageError(`${name} takes ${params.map((p) => `<${p}>`).join(' ') || 'no arguments'}`);
    const misplaced = Object.keys(flags).filter((f) => COMMAND_FLAGS.has(f) && !allowed.includes(f as keyof Flags));
    if (misplaced.length) throw usageError(`--${misplaced[0]} does not apply to ${name}`);

    // Argument mistakes are reported before anything is looked up.
    if (params.length > 0) namespaceArg(args[0]);
    if (name === 'key create') parseScopes(flags.scopes);
    if (name === 'redrive') (await import('./admin-redrive')).parseRedriveArgs(args[1], flags);
    parseLimits(flags);

    target = resolveTarget(flags as TargetFlags, env);
    err(`target: ${target.describe}`);
    await useTarget(target);
    const print = (human: string, json: unknown) => out(flags.json ? JSON.stringify(json, null, 2) : human);
    let client = io.apiGateway;
    const apiGateway = () => (client ??= ownClient = apiGatewayClient(process.env.AWS_REGION));
    await handlers[name]({ args, flags, target, apiGateway, print, err });
    return 0;
  } catch (e) {
    if (e instanceof AdminError) {
      err(`error: ${e.message}`);
      return e.exitCode;
    }
    err(`error: ${target ? explain(e, target) : (e as Error).message}`);
    return 1;
  } finally {
    resetClients();
    ownClient?.destroy();
  }
}

// Runs when started as a program (npm run admin); importing the module (tests) runs nothing.
// Checked by path because this file is also compiled to CommonJS by jest, where import.meta is absent.
if (/[\\/]bin[\\/]admin\.ts$/.test(process.argv[1] ?? '')) {
  void run(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
