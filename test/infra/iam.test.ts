/**
 * Least privilege: each function's role allows exactly the table access that lib/table-access.ts
 * lists, and that list covers every table the function's code names; every other operation its
 * bundle can call (SQS, KMS, Step Functions, Secrets Manager) is granted on the resource the code
 * calls it on, and the role allows nothing else but what AWS itself does with it (event sources,
 * on-failure destinations). A missing grant would only show in AWS (AccessDenied), never locally,
 * so the bundle of each function is checked here.
 */
import { bundleText } from './bundle';
import { ENCRYPTION_CONTEXT } from '../../lambda/core/adapters/data-keys';
import { TABLES, type TableId } from '../../lambda/core/storage/tables';
import { DYNAMODB_ACTIONS, LEVEL_ACTIONS, SECRETS_KEY_ACCESS, SERVICE_QUEUE_ACCESS, TABLE_ACCESS, type FunctionId } from '../../lib/table-access';
import { actions, defaultStack, type Statement } from './stack';

const { stack, template, logicalId, statementsOf } = defaultStack();
const resources = template.toJSON().Resources as Record<string, { Type: string; Properties: any }>;
const functionIds = [...stack.functions.all.keys()];

const WRITE_ACTIONS = ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'];

const tablesIn = (s: Statement): TableId[] =>
  (Object.keys(TABLES) as TableId[]).filter((t) => JSON.stringify(s.Resource).includes(`"${logicalId(stack.tables.byId[t])}"`));

/** Table access the role of `id` has: table → the DynamoDB actions allowed on it. */
function dynamoAccess(id: FunctionId): Map<TableId, Set<string>> {
  const out = new Map<TableId, Set<string>>();
  for (const s of statementsOf(id)) {
    const dynamo = actions(s).filter((a) => a.startsWith('dynamodb:'));
    if (dynamo.length === 0) continue;
    expect(s.Effect).toBe('Allow');
    const tables = tablesIn(s);
    expect(tables.length).toBeGreaterThan(0); // never dynamodb:* on Resource *
    for (const t of tables) dynamo.forEach((a) => (out.get(t) ?? out.set(t, new Set()).get(t)!).add(a));
  }
  return out;
}

/** `table/index` for every index the code bundled into function `id` queries (`IndexName: '…'`, always a literal). */
function indexesQueriedByCode(id: FunctionId): string[] {
  const names = new Set([...bundleText(id).matchAll(/\bIndexName: ("?)([^,}\s]*)/g)].map((m) => {
    if (!m[1]) throw new Error(`${id}: IndexName ${m[2]} is not a literal; the test reads index names from the bundle`);
    return m[2].replace(/"$/, '');
  }));
  return [...names].map((ix) => {
    const table = (Object.keys(TABLES) as TableId[]).find((t) => [...(TABLES[t].globalIndexes ?? []), ...(TABLES[t].localIndexes ?? [])].some((i) => i.indexName === ix));
    if (!table) throw new Error(`${id}: queries index ${ix}, which no table of lambda/core/storage/tables.ts declares`);
    return `${table}/${ix}`;
  }).sort();
}

/** Tables the code bundled into function `id` names through `tableName('…')`. */
function tablesNamedByCode(id: FunctionId): TableId[] {
  return [...new Set([...bundleText(id).matchAll(/tableName\d*\("(\w+)"\)/g)].map((m) => m[1] as TableId))];
}

describe('IAM', () => {
  it.each(functionIds)('%s may use exactly the tables TABLE_ACCESS lists, with that access', (id) => {
    const access = dynamoAccess(id);
    const grants = TABLE_ACCESS[id];
    expect([...access.keys()].sort()).toEqual(Object.keys(grants).sort());
    for (const [table, allowed] of access) {
      const writes = WRITE_ACTIONS.filter((a) => allowed.has(a));
      if (grants[table] === 'read') expect(writes).toEqual([]);
      // Never more than the table's access level allows.
      expect([...allowed].filter((a) => !LEVEL_ACTIONS[grants[table]!].includes(a as never))).toEqual([]);
    }
  });

  it.each(functionIds)('%s is granted every table its code names', (id) => {
    const granted = Object.keys(TABLE_ACCESS[id]);
    const named = tablesNamedByCode(id);
    expect(named.length).toBeGreaterThan(0); // the scan still finds table accesses at all
    for (const table of named) expect({ table, granted: granted.includes(table) }).toEqual({ table, granted: true });
  });

  it.each(functionIds)('%s may query exactly the indexes its code queries (no index wildcard)', (id) => {
    const granted = new Set<string>();
    for (const s of statementsOf(id)) {
      for (const r of [s.Resource].flat().map((x) => JSON.stringify(x)).filter((x) => x.includes('/index/'))) {
        const table = (Object.keys(TABLES) as TableId[]).find((t) => r.includes(`"${logicalId(stack.tables.byId[t])}"`));
        granted.add(`${table}/${/\/index\/([^"]*)"/.exec(r)![1]}`);
        expect(actions(s)).toEqual(['dynamodb:Query']); // indexes serve Query only
      }
    }
    expect([...granted].sort()).toEqual(indexesQueriedByCode(id));
  });

  it('lets the authorizer only read the meta table', () => {
    const access = dynamoAccess('authorizer');
    expect([...access.keys()]).toEqual(['meta']);
    const meta = [...access.get('meta')!];
    expect(meta.filter((a) => !/^dynamodb:(Get|BatchGet|Query|Scan|DescribeTable|ConditionCheckItem|GetRecords|GetShardIterator)/.test(a))).toEqual([]);
  });

  it.each(functionIds)('%s: every operation its bundle can call is granted on the resources it calls it on, and nothing else is granted', (id) => {
    const used = operationsOf(id);
    const granted = grantedPairs(id);
    const missing = [...used].filter((p) => !granted.has(p) && !UNREACHABLE[id]?.[p.split(' ')[0]]);
    const unused = [...granted].filter((p) => !used.has(p) && !GRANTED_FOR_AWS[`${id} ${p}`]);
    table.push(`${id.padEnd(16)} ${[...used].sort().map((p) => `${p}${granted.has(p) ? '' : ' (not granted: unreachable)'}`).join(', ')}`);
    expect({ id, missing }).toEqual({ id, missing: [] });
    expect({ id, unused }).toEqual({ id, unused: [] });
  });

  it.each(functionIds)('%s: the DynamoDB actions its bundle can call are exactly those DYNAMODB_ACTIONS lists', (id) => {
    expect([...dynamoOperationsOf(id)].sort()).toEqual([...DYNAMODB_ACTIONS[id]].sort());
  });

  it('grants KMS use only with the encryption context of webhook secrets', () => {
    for (const id of functionIds) {
      for (const s of statementsOf(id).filter((x) => actions(x).some((a) => a.startsWith('kms:')))) {
        expect((s as Statement & { Condition?: unknown }).Condition).toEqual({ StringEquals: { 'kms:EncryptionContext:purpose': ENCRYPTION_CONTEXT.purpose } });
      }
    }
  });

  it('grants no Scan and no stream action to any function', () => {
    for (const id of functionIds) expect([...grantedActions(id)].filter((a) => /Scan|GetRecords|GetShardIterator|DescribeStream|ListStreams/.test(a))).toEqual([]);
  });
});

const table: string[] = [];
afterAll(() => process.stdout.write(`\nfunction → AWS operations its bundle can call (all granted unless marked):\n${table.join('\n')}\n`));

/** DynamoDB document-client and client commands, SQS, Step Functions, Secrets Manager and KMS commands → IAM actions. */
const COMMAND_ACTIONS: Record<string, string[]> = {
  Get: ['dynamodb:GetItem'], GetItem: ['dynamodb:GetItem'], Put: ['dynamodb:PutItem'], PutItem: ['dynamodb:PutItem'],
  Update: ['dynamodb:UpdateItem'], UpdateItem: ['dynamodb:UpdateItem'], Delete: ['dynamodb:DeleteItem'], DeleteItem: ['dynamodb:DeleteItem'],
  Query: ['dynamodb:Query'], Scan: ['dynamodb:Scan'], BatchGet: ['dynamodb:BatchGetItem'], BatchWrite: ['dynamodb:BatchWriteItem'],
  // Transactions need the action of each item they carry (counted from the bundle's transaction items below).
  TransactWrite: [], TransactGet: ['dynamodb:GetItem'],
  SendMessage: ['sqs:SendMessage'], SendMessageBatch: ['sqs:SendMessage'], ReceiveMessage: ['sqs:ReceiveMessage'],
  DeleteMessage: ['sqs:DeleteMessage'], DeleteMessageBatch: ['sqs:DeleteMessage'], ChangeMessageVisibility: ['sqs:ChangeMessageVisibility'],
  ChangeMessageVisibilityBatch: ['sqs:ChangeMessageVisibility'], CreateQueue: ['sqs:CreateQueue', 'sqs:TagQueue'], DeleteQueue: ['sqs:DeleteQueue'],
  GetQueueAttributes: ['sqs:GetQueueAttributes'], StartExecution: ['states:StartExecution'], DescribeExecution: ['states:DescribeExecution'], GetSecretValue: ['secretsmanager:GetSecretValue'],
  GenerateDataKey: ['kms:GenerateDataKey'], Decrypt: ['kms:Decrypt'],
};

/** The resources of the stack that a function's code calls AWS operations on (DynamoDB tables apart: see the table tests above). */
type ResourceId = 'serviceQueues' | 'deliveryQueue' | 'secretsKey' | 'retryWorkflow' | 'retryExecutions' | 'receiptKey' | 'sweeperDlq' | 'schedulerDlq' | 'webhookAttemptDlq' | 'tickTasks';

const resolved = (token: string) => JSON.stringify(stack.resolve(token));
const RESOURCE_ARNS: Record<Exclude<ResourceId, 'retryExecutions'>, string> = {
  // arn:aws:sqs:<region>:<account>:<stack prefix>*: every SQS queue of a service queue.
  serviceQueues: resolved(stack.serviceQueues.queueArns),
  deliveryQueue: resolved(stack.webhooks.queue.queueArn),
  secretsKey: resolved(stack.functions.secretsKey.keyArn),
  retryWorkflow: resolved(stack.webhooks.stateMachine.stateMachineArn),
  receiptKey: resolved(stack.serviceQueues.receiptKey.secretArn),
  sweeperDlq: resolved(stack.sweeper.deadLetterQueue.queueArn),
  schedulerDlq: resolved(stack.scheduler.deadLetterQueue.queueArn),
  // The failed-execution rule's DLQ, also the attempt function's on-failure destination.
  webhookAttemptDlq: resolved(stack.webhooks.executionFailuresDeadLetterQueue.queueArn),
  tickTasks: resolved(stack.scheduler.tasksQueue.queueArn),
};

/** Which resource a statement's resource entry is, or its JSON when it is none of those above. */
function resourceOf(entry: unknown): string {
  const json = JSON.stringify(entry);
  const known = (Object.keys(RESOURCE_ARNS) as (keyof typeof RESOURCE_ARNS)[]).find((r) => RESOURCE_ARNS[r] === json);
  if (known) return known;
  // The executions of the retry workflow: arn:...:execution:<its name>:* (grantExecution).
  if (json.includes(':execution:",') && json.includes(`{"Ref":"${logicalId(stack.webhooks.stateMachine)}"}`) && json.endsWith('":*"]]}')) return 'retryExecutions';
  return json;
}

/**
 * Where the bundle's operations go, by the module that holds the call (esbuild marks each module's
 * code with a `// path` comment): each module below builds the address it calls from one setting
 * only. `sendBatches` of lambda/core/adapters/sqs.ts sends to the URL it is given, so its operations go
 * to the resources of the modules that call it (SENDERS).
 */
const CALL_SITES: Record<string, ResourceId | Record<string, ResourceId> | 'senders'> = {
  // Every QueueUrl is queueUrl(<MSG_SQS_QUEUE_PREFIX><queue id>), every QueueName <prefix><queue id>.
  'lambda/queues/storage/service-queues.ts': 'serviceQueues',
  'lambda/core/adapters/sqs.ts': 'senders',
  // MSG_WEBHOOK_QUEUE_URL: the delivery function changes the visibility of the jobs it received.
  'lambda/webhooks/storage/delivery-queue.ts': 'deliveryQueue',
  // KeyId is MSG_SECRETS_KMS_KEY_ARN.
  'lambda/core/adapters/data-keys.ts': 'secretsKey',
  // MSG_WEBHOOK_RETRY_STATE_MACHINE_ARN, and the executions named under it.
  'lambda/webhooks/storage/retry-workflow.ts': { StartExecution: 'retryWorkflow', DescribeExecution: 'retryExecutions' },
  // getSecret(MSG_RECEIPT_KEY_SECRET_ARN), lambda/queues/storage/signing-key.ts.
  '@aws-lambda-powertools/parameters/lib/esm/secrets/SecretsProvider.js': 'receiptKey',
};
/** Callers of `sendBatches` → the queue they pass it. */
const SENDERS: Record<string, ResourceId> = {
  'lambda/queues/storage/service-queues.ts': 'serviceQueues',
  // MSG_WEBHOOK_QUEUE_URL.
  'lambda/webhooks/storage/delivery-queue.ts': 'deliveryQueue',
  // MSG_TICK_TASKS_QUEUE_URL.
  'lambda/schedules/storage/tick-tasks.ts': 'tickTasks',
};

/** The bundle's code by module: [module path (node_modules/ prefix removed), code]. */
function modulesOf(text: string): [string, string][] {
  const out: [string, string][] = [];
  let current = '(bundle)';
  let start = 0;
  for (const m of text.matchAll(/^\/\/ (\S+\.(?:ts|js|mjs|cjs))$/gm)) {
    out.push([current, text.slice(start, m.index)]);
    current = m[1].replace(/^.*node_modules\//, '');
    start = m.index! + m[0].length;
  }
  out.push([current, text.slice(start)]);
  return out;
}

/** The commands (`new XCommand(`, esbuild may suffix a number) in a piece of code, each with its IAM actions. */
function commandsIn(code: string, id: FunctionId): [string, string[]][] {
  return [...code.matchAll(/new (\w+?)Command\d*\(/g)].map((m) => {
    const actions = COMMAND_ACTIONS[m[1]];
    if (!actions) throw new Error(`${id}: no IAM mapping for ${m[1]}Command; add it to COMMAND_ACTIONS`);
    return [m[1], actions];
  });
}

/** `action resource` for every operation other than DynamoDB's that the bundle of `id` can call. */
function operationsOf(id: FunctionId): Set<string> {
  const modules = modulesOf(bundleText(id));
  const out = new Set<string>();
  for (const [path, code] of modules) {
    for (const [command, actions] of commandsIn(code, id)) {
      if (actions.every((a) => a.startsWith('dynamodb:'))) continue;
      const site = CALL_SITES[path];
      if (!site) throw new Error(`${id}: ${command}Command in ${path}: say in CALL_SITES which resource it is called on`);
      let resources: ResourceId[];
      if (site === 'senders') {
        resources = modules.filter(([p, c]) => /(?<!function )\bsendBatches\(/.test(c) && p !== path).map(([p]) => {
          if (!SENDERS[p]) throw new Error(`${id}: ${p} calls sendBatches: say in SENDERS which queue it sends to`);
          return SENDERS[p];
        });
      } else if (typeof site === 'string') resources = [site];
      else {
        if (!site[command]) throw new Error(`${id}: ${command}Command in ${path}: say in CALL_SITES which resource it is called on`);
        resources = [site[command]];
      }
      for (const a of actions) for (const r of resources) out.add(`${a} ${r}`);
    }
  }
  return out;
}

/** The DynamoDB actions the bundle of `id` can call: commands, paginators, transaction items. */
function dynamoOperationsOf(id: FunctionId): Set<string> {
  const text = bundleText(id);
  const out = new Set(commandsIn(text, id).flatMap(([, actions]) => actions).filter((a) => a.startsWith('dynamodb:')));
  for (const m of text.matchAll(/\bpaginate(Query|Scan)\(/g)) out.add(`dynamodb:${m[1]}`);
  if (/new TransactWriteCommand\d*\(/.test(text)) {
    for (const m of text.matchAll(/\b(Put|Update|Delete|ConditionCheck): \{/g)) out.add(m[1] === 'ConditionCheck' ? 'dynamodb:ConditionCheckItem' : `dynamodb:${m[1]}Item`);
  }
  return out;
}

/** Every action the role of `id` allows (logs and X-Ray apart). */
function grantedActions(id: FunctionId): Set<string> {
  const out = new Set<string>();
  for (const s of statementsOf(id)) for (const a of actions(s)) if (!/^(logs|xray):/.test(a)) out.add(a);
  return out;
}

/** `action resource` for every action the role of `id` allows, DynamoDB, logs and X-Ray apart (tested above). */
function grantedPairs(id: FunctionId): Set<string> {
  const out = new Set<string>();
  for (const s of statementsOf(id)) {
    expect(s.Effect).toBe('Allow');
    for (const a of actions(s).filter((x) => !/^(dynamodb|logs|xray):/.test(x))) {
      for (const r of [s.Resource].flat()) out.add(`${a} ${resourceOf(r)}`);
    }
  }
  return out;
}

/** Operations a bundle contains but never calls, with the reason (they stay ungranted). */
const UNREACHABLE: Partial<Record<FunctionId, Record<string, string>>> = Object.fromEntries(
  (['webhookDelivery', 'webhookAttempt', 'scheduler'] as const).map((id) => [id, {
    'kms:GenerateDataKey': 'the KMS adapter object carries generate() beside decrypt(); only sealing (a webhook write) calls it, and neither delivery nor the scheduler\'s handover ever writes a webhook',
  }]),
);

/**
 * Grants that AWS uses on the function's behalf, not its code: `function action resource` → the
 * reason. Each names one resource, so none can stand in for an operation on another.
 */
const EVENT_SOURCE = 'the SQS event source mapping polls, deletes and reads the attributes of the delivery queue with the function\'s role (https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html#events-sqs-permissions); CDK\'s SqsEventSource grants these with grantConsumeMessages';
const ON_FAILURE = 'Lambda sends the record of a failed asynchronous invocation to the on-failure destination with the function\'s role (https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-retain-records.html#invocation-async-destinations); CDK\'s SqsDestination grants these with grantSendMessages';
const GRANTED_FOR_AWS: Record<string, string> = {
  ...Object.fromEntries(['ReceiveMessage', 'ChangeMessageVisibility', 'DeleteMessage', 'GetQueueAttributes', 'GetQueueUrl'].map((a) => [`webhookDelivery sqs:${a} deliveryQueue`, EVENT_SOURCE])),
  ...Object.fromEntries(['ReceiveMessage', 'ChangeMessageVisibility', 'DeleteMessage', 'GetQueueAttributes', 'GetQueueUrl'].map((a) => [`scheduler sqs:${a} tickTasks`, EVENT_SOURCE])),
  ...Object.fromEntries((['sweeper', 'scheduler', 'webhookAttempt'] as const).flatMap((id) => ['SendMessage', 'GetQueueAttributes', 'GetQueueUrl'].map((a) => [`${id} sqs:${a} ${id}Dlq`, ON_FAILURE]))),
};

describe('the grants tables (lib/table-access.ts) agree with each other', () => {
  it('gives KMS and SQS actions only to functions that list them', () => {
    for (const id of functionIds) {
      const granted = [...grantedActions(id)];
      expect(granted.filter((a) => a.startsWith('kms:')).sort()).toEqual([...(SECRETS_KEY_ACCESS[id] ?? [])].sort());
      for (const a of SERVICE_QUEUE_ACCESS[id]) expect(granted).toContain(a);
    }
  });

  it.each(functionIds)('%s writes logs only to its own log group and traces to X-Ray', (id) => {
    const fn = resources[logicalId(stack.functions.all.get(id)!)];
    const logGroup = fn.Properties.LoggingConfig.LogGroup.Ref;
    for (const s of statementsOf(id)) {
      if (actions(s).some((a) => a.startsWith('logs:'))) {
        expect(actions(s).sort()).toEqual(['logs:CreateLogStream', 'logs:PutLogEvents']);
        expect(s.Resource).toEqual({ 'Fn::GetAtt': [logGroup, 'Arn'] });
      }
      if (s.Resource === '*') expect(actions(s).sort()).toEqual(['xray:PutTelemetryRecords', 'xray:PutTraceSegments']);
    }
  });
});
