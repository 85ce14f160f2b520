/**
 * The admin CLI's help texts: one entry per command, from which both the full usage
 * (`npm run admin -- --help`) and each command's own usage (`npm run admin -- key create --help`,
 * or `npm run admin -- help key create`) are printed. A new command adds its entry here;
 * test/unit/admin-help.test.ts fails for a command without one.
 */

export interface CommandHelp {
  /** Arguments and flags, after the command name. */
  synopsis: string;
  /** What it does, one or a few lines. */
  about: string;
  /** The command's own flags. */
  options?: [flag: string, text: string][];
  /** Example command lines (after `npm run admin -- `). */
  examples?: string[];
}

const LIMIT_OPTIONS: [string, string][] = [
  ['--publish N', 'publish requests per minute (default 1000)'],
  ['--consume N', 'consume, ack and commit requests per minute (default 500)'],
  ['--management N', 'all other requests per minute (default 100)'],
  ['--fanout N', 'writes per minute publishes may cause, messages x bindings reached (default 100000)'],
  ['--portal N', "requests per minute of each application's portal sessions, apart from the namespace's (default 100)"],
];

export const COMMAND_HELP: Record<string, CommandHelp> = {
  'namespace create': {
    synopsis: '<name> [--publish N] [--consume N] [--management N] [--fanout N]',
    about: 'Creates a namespace (a lowercase DNS label), with per-minute limits where given.',
    options: LIMIT_OPTIONS,
    examples: ['namespace create acme --publish 2000'],
  },
  'namespace list': { synopsis: '', about: 'Lists every namespace with its status, creation time and limits.', examples: ['namespace list --json'] },
  'key create': {
    synopsis: "<namespace> --scopes publish,consume,manage|'*' [--description TEXT]",
    about:
      'Creates an API key and prints it once; only its SHA-256 hash is stored. Against a deployed stack it also\n' +
      "creates the key's API Gateway key (value = the hash) in the usage plan; without it the key gets 401.",
    options: [
      ['--scopes LIST', "comma-separated: publish, consume, manage, or '*' for all (quote * for the shell)"],
      ['--description TEXT', 'shown by key list'],
    ],
    examples: ["key create acme --scopes publish,consume --description 'order service'", "key create acme --scopes '*'"],
  },
  'key list': { synopsis: '<namespace>', about: 'Lists key ids, scopes, creation and revocation times (never the key or its hash).' },
  'key revoke': {
    synopsis: '<namespace> <key-id>',
    about: "Revokes a key (the id from key list): it answers 401 within 30 s. Deployed stack: also deletes its API Gateway key.",
    examples: ['key revoke acme 01J2XK...'],
  },
  'limits set': {
    synopsis: '<namespace> [--publish N] [--consume N] [--management N] [--fanout N] [--portal N]',
    about: 'Sets per-minute limits of a namespace, keeping those not given; the service applies them within 10 s.',
    options: LIMIT_OPTIONS,
    examples: ['limits set acme --consume 1000'],
  },
  'limits get': { synopsis: '<namespace>', about: "Shows a namespace's limits per minute (defaults marked)." },
  'schedule-limit set': {
    synopsis: '<namespace> <limit>',
    about: 'Sets how many schedules the namespace may have (default 1000); existing ones stay, a create beyond it answers 409 SCHEDULE_LIMIT_EXCEEDED.',
    examples: ['schedule-limit set acme 5000'],
  },
  'schedule-limit get': { synopsis: '<namespace>', about: "Shows a namespace's schedule limit and how many schedules it has." },
  'portal-origins set': {
    synopsis: '<namespace> <origin,origin...|none>',
    about: 'Sets the origins that may embed the namespace\'s portal in a frame and serve its logo (CSP frame-ancestors, img-src); none clears them.',
    examples: ['portal-origins set acme https://app.acme.example,https://www.acme.example', 'portal-origins set acme none'],
  },
  'portal-origins get': { synopsis: '<namespace>', about: "Shows the origins that may frame the namespace's portal." },
  'portal-theme set': {
    synopsis: '<namespace> <brand|none> <logo|none>',
    about: "Stores the namespace's portal theme: a hex brand colour (#rgb or #rrggbb) and an https logo URL (shown from an origin of portal-origins); none leaves a field to the link's parameters, none none removes the theme.",
    examples: ["portal-theme set acme '#c2410c' https://app.acme.example/logo.svg", 'portal-theme set acme none none'],
  },
  'portal-theme get': { synopsis: '<namespace>', about: "Shows the namespace's stored portal theme." },
  'resource-limit set': {
    synopsis: '<namespace> <queues|streams|subscriptions|webhooks|bindings-per-topic-filter|bindings-per-publish> <limit>',
    about:
      'Sets how many queues, streams, subscriptions or webhooks the namespace may have (defaults 1000, 1000, 1000, 100),\n' +
      'or how many of them may bind one topic filter (default 100); existing ones stay, a create beyond it answers 409 LIMIT_EXCEEDED.\n' +
      'Also: bindings-per-publish, held-messages, held-bytes, schedule-runs-per-minute, event-types (default 500, docs/catalog.md).',
    examples: ['resource-limit set acme queues 5000', 'resource-limit set acme bindings-per-topic-filter 500'],
  },
  'resource-limit get': { synopsis: '<namespace>', about: "Shows a namespace's resource limits and how many resources of each kind it has." },
  'webhook-health set': {
    synopsis: '<namespace> <failure_threshold|disable_after> <value|default>',
    about:
      "Sets the endpoint-health thresholds of the namespace's webhooks that set none of their own: failure_threshold\n" +
      '(deliveries ending in failure in a row before a webhook is disabled, 1-10000, default 100) or disable_after\n' +
      '(seconds of continuous failure, 60-2592000, default 432000 = 5 days); "default" removes the namespace\'s value.',
    examples: ['webhook-health set acme failure_threshold 20', 'webhook-health set acme disable_after 86400', 'webhook-health set acme disable_after default'],
  },
  'webhook-health get': { synopsis: '<namespace>', about: "Shows the health thresholds the namespace's webhooks get when they set none (defaults marked)." },
  'sqs-queues list': {
    synopsis: '[--namespace NS]',
    about:
      "Lists the SQS queues behind this deployment's queues (by the stack's prefix, the SqsQueuePrefix output),\n" +
      'with their namespace, queue, message count and whether a queue still uses them.',
    options: [['--namespace NS', "only this namespace's queues"]],
    examples: ['--outputs cdk-outputs.json sqs-queues list --json'],
  },
  'sqs-queues delete': {
    synopsis: '[--orphans | --all] [--namespace NS] [--min-age SECONDS] [--yes]',
    about:
      'Deletes the SQS queues no queue uses (--orphans, the default; older than --min-age) or all of them (--all:\n' +
      'what cdk destroy leaves). Without --yes it only says what it would delete.',
    options: [
      ['--orphans', 'the SQS queues no queue uses (the default)'],
      ['--all', "every SQS queue of the deployment's prefix (after cdk destroy)"],
      ['--namespace NS', "only this namespace's queues"],
      ['--min-age SECONDS', 'only queues older than this (default 300), so a queue being created is left alone'],
      ['--yes', 'delete; without it, a dry run'],
    ],
    examples: ['--outputs cdk-outputs.json sqs-queues delete --all --yes'],
  },
  redrive: {
    synopsis: '<namespace> <queue> --to-topic TOPIC [--max N] [--dry-run]',
    about:
      "Moves messages from a queue (a dead-letter topic's, say) back to TOPIC: each is published, then removed\n" +
      '(at least once); dlq_* properties are dropped, x-hop is kept. Progress goes to stderr after every batch.\n' +
      'A deployed stack needs --outputs FILE (every table name).',
    options: [
      ['--to-topic TOPIC', 'the topic to publish the messages to'],
      ['--max N', 'move at most N messages (default: all)'],
      ['--dry-run', 'count what would move, change nothing'],
    ],
    examples: ['--outputs cdk-outputs.json redrive acme orders-dlq --to-topic orders/retry --dry-run'],
  },
};

const TARGET_HELP = `Target (default: the local runtime started with npm start on port 8080):
  --port N               the local runtime serving on port N
  --endpoint URL         a DynamoDB endpoint (or env MSG_DYNAMODB_ENDPOINT)
  --outputs FILE         a deployed stack: the file of npx cdk deploy --outputs-file FILE
  --stack NAME           the stack in --outputs FILE when it holds several
  --meta-table NAME      a deployed stack: its metadata table (or env MSG_META_TABLE)
  --region REGION        AWS region (default: AWS_REGION or your AWS profile's region)
  --usage-plan ID        a deployed stack: its usage plan (the UsagePlanId output; read from
                         --outputs FILE when given, or env MSG_USAGE_PLAN_ID)`;

const OTHER_HELP = `Other options:
  --json                 print results as JSON on stdout (messages and progress go to stderr);
                         pipe it with npm run -s admin (-s keeps npm's own lines off stdout)
  -h, --help             this help; after a command, that command's help`;

const firstSentence = (text: string) => {
  const flat = text.replace(/\n/g, ' ');
  const end = flat.search(/\.(\s|$)/);
  return end === -1 ? flat : flat.slice(0, end + 1);
};
const indent = (text: string, by: string) => text.split('\n').map((l) => by + l).join('\n');
const pad = (s: string, width: number) => (s.length >= width - 1 ? `${s}\n${' '.repeat(width)}` : s.padEnd(width));

/** The whole usage: every command in one line or two, targets and other options. */
export function usage(): string {
  const lines = Object.entries(COMMAND_HELP).map(([name, h]) => `  ${`${name} ${h.synopsis}`.trimEnd()}\n${indent(firstSentence(h.about), '      ')}`);
  return `Usage: npm run admin -- <command> [options]
       npm run admin -- <command> --help      the command's own usage

Commands:
${lines.join('\n')}

${TARGET_HELP}

${OTHER_HELP}
`;
}

/** One command's usage: synopsis, what it does, its options, examples, then the shared options. */
export function commandUsage(name: string): string {
  const h = COMMAND_HELP[name];
  const options = h.options?.length ? `\nOptions:\n${h.options.map(([f, t]) => `  ${pad(f, 23)}${t}`).join('\n')}\n` : '';
  const examples = h.examples?.length ? `\nExamples:\n${h.examples.map((e) => `  npm run admin -- ${e}`).join('\n')}\n` : '';
  return `Usage: npm run admin -- ${name} ${h.synopsis}`.trimEnd() + `\n\n${h.about}\n${options}${examples}\n${TARGET_HELP}\n\n${OTHER_HELP}\n`;
}

/** The commands of a group (`key`), for `npm run admin -- key --help`. */
export function groupUsage(group: string): string | undefined {
  const names = Object.keys(COMMAND_HELP).filter((n) => n.split(' ')[0] === group);
  if (names.length === 0) return undefined;
  return `Commands of ${group}:\n${names.map((n) => `  npm run admin -- ${n} ${COMMAND_HELP[n].synopsis}`.trimEnd()).join('\n')}\n\nnpm run admin -- ${group} <command> --help for one command's usage.\n`;
}
