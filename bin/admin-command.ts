/**
 * What every admin command gets and shares: the flags of the command line, the context a command
 * runs in (bin/admin.ts builds it), and the namespace checks and table layout of the output.
 */
import { AdminError, type Target } from './admin-target';
import type { ApiGatewaySender } from './admin-usage-plan';
import { NAMESPACE_NAME } from '../lambda/core/rules/auth';
import { getNamespace } from '../lambda/namespaces/storage/namespaces';

export const OPTIONS = {
  publish: { type: 'string' },
  consume: { type: 'string' },
  management: { type: 'string' },
  fanout: { type: 'string' },
  portal: { type: 'string' },
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
export type Flags = { [K in keyof typeof OPTIONS]?: (typeof OPTIONS)[K]['type'] extends 'boolean' ? boolean : string };

/** What a command runs with. */
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

/** Commands by name (`<group> <verb>`, or `redrive`), each run with its context. */
export type Commands = Record<string, (c: Context) => Promise<void>>;

/** The name, or a usage error for one that is no namespace name. */
export function namespaceArg(name: string): string {
  if (!NAMESPACE_NAME.test(name)) {
    throw new AdminError(`"${name}" is not a valid namespace name: use a lowercase DNS label, 1 to 63 characters of a-z, 0-9 and "-", not starting or ending with "-"`, 2);
  }
  return name;
}

/** Columns padded to their widest cell, two spaces apart. */
export function table(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd()).join('\n');
}

/** The namespace's record; an error that says how to list or create it when there is none. */
export async function mustExist(namespace: string) {
  const ns = await getNamespace(namespace);
  if (!ns) throw new AdminError(`namespace ${namespace} does not exist; list them with npm run admin -- namespace list, or create it with npm run admin -- namespace create ${namespace}`);
  return ns;
}
