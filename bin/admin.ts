/**
 * The admin CLI: `npm run admin -- <command>`. Issues namespaces, API keys and per-namespace
 * limits (DESIGN.md sections 2 and 10) straight into the metadata table, through the same storage
 * modules the service uses, against a running local runtime or a deployed stack
 * (bin/admin-target.ts). This file parses the command line and runs one command; the commands live
 * by group: namespaces here, keys in ./admin-keys.ts, limits in ./admin-limits.ts, the portal in
 * ./admin-portal.ts, redrive and SQS queues in ./admin-redrive.ts and ./admin-sqs-queues.ts.
 */
import { parseArgs } from 'node:util';
import { mustExist, namespaceArg, OPTIONS, table, type Commands, type Flags } from './admin-command';
import { COMMAND_HELP, commandUsage, groupUsage, usage } from './admin-help';
import { keyCommands, parseScopes } from './admin-keys';
import { effectiveLimits, LIMIT_FLAGS, limitCommands, limitsText, parseLimits } from './admin-limits';
import { portalCommands } from './admin-portal';
import { createProgress } from './admin-progress';
import { AdminError, explain, resolveTarget, useTarget, type Target, type TargetFlags } from './admin-target';
import { apiGatewayClient, type ApiGatewaySender } from './admin-usage-plan';
import { isoTime } from '../lambda/core/rules/envelope';
import { resetClients } from '../lambda/core/storage/client';
import { createNamespace, listNamespaces } from '../lambda/namespaces/storage/namespaces';

export const USAGE = usage();

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

const usageError = (message: string) => new AdminError(`${message}\n\n${USAGE}`, 2);

const handlers: Commands = {
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

  ...keyCommands,
  ...limitCommands,
  ...portalCommands({ mustExist, namespaceArg }),

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
