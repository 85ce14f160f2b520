/**
 * Least privilege: each function's role allows exactly the table access that lib/table-access.ts
 * lists, and that list covers every table the function's code names. A missing grant would only
 * show in AWS (AccessDenied), never locally, so the bundle of each function is checked here.
 */
import { bundleText } from './bundle';
import { TABLES, type TableId } from '../../lambda/storage/tables';
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

  it('lets the authorizer only read the meta table', () => {
    const access = dynamoAccess('authorizer');
    expect([...access.keys()]).toEqual(['meta']);
    const meta = [...access.get('meta')!];
    expect(meta.filter((a) => !/^dynamodb:(Get|BatchGet|Query|Scan|DescribeTable|ConditionCheckItem|GetRecords|GetShardIterator)/.test(a))).toEqual([]);
  });

  it.each(functionIds)('%s: the AWS operations its bundle can call are granted, and every granted action is called (or has a reason)', (id) => {
    const used = operationsOf(id);
    const granted = grantedActions(id);
    const missing = [...used].filter((a) => !granted.has(a) && !UNREACHABLE[id]?.[a]);
    const unused = [...granted].filter((a) => !used.has(a) && !GRANTED_UNUSED[a] && !GRANTED_UNUSED[`${id}:${a}`]);
    table.push(`${id.padEnd(16)} ${[...used].sort().map((a) => `${a}${granted.has(a) ? '' : ' (not granted: unreachable)'}`).join(', ')}`);
    expect({ id, missing }).toEqual({ id, missing: [] });
    expect({ id, unused }).toEqual({ id, unused: [] });
    // The declared list is what the bundle calls, exactly: a change in the code updates it.
    expect([...used].filter((a) => a.startsWith('dynamodb:')).sort()).toEqual([...DYNAMODB_ACTIONS[id]].sort());
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

/** Operations the bundle of `id` can call: `new XCommand(` (esbuild may suffix a number), paginators, transaction items. */
function operationsOf(id: FunctionId): Set<string> {
  const text = bundleText(id);
  const out = new Set<string>();
  for (const m of text.matchAll(/new (\w+?)Command\d*\(/g)) {
    const actions = COMMAND_ACTIONS[m[1]];
    if (!actions) throw new Error(`${id}: no IAM mapping for ${m[1]}Command; add it to COMMAND_ACTIONS`);
    actions.forEach((a) => out.add(a));
  }
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

/** Operations a bundle contains but never calls, with the reason (they stay ungranted). */
const UNREACHABLE: Partial<Record<FunctionId, Record<string, string>>> = Object.fromEntries(
  (['webhookDelivery', 'webhookAttempt', 'scheduler'] as const).map((id) => [id, {
    'kms:GenerateDataKey': 'the KMS adapter object carries generate() beside decrypt(); only sealing (a webhook write) calls it, and neither delivery nor the scheduler\'s handover ever writes a webhook',
  }]),
);

/** Actions granted without a command of their own in the bundle (`action`, or `function:action`), with the reason. */
const GRANTED_UNUSED: Record<string, string> = {
  'sqs:GetQueueAttributes': 'added by CDK Queue.grantSendMessages with SendMessage (the delivery queue); harmless metadata read',
  'sqs:GetQueueUrl': 'added by CDK Queue.grantSendMessages with SendMessage; the code builds queue URLs itself',
  'queues:secretsmanager:DescribeSecret': 'added by CDK Secret.grantRead with GetSecretValue (the receipt-handle signing key)',
  'webhookDelivery:sqs:ReceiveMessage': 'the SQS event source mapping polls the delivery queue with the function\'s role (https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html#events-sqs-permissions)',
  'webhookDelivery:sqs:ChangeMessageVisibility': 'the SQS event source mapping, as above',
  'webhookDelivery:sqs:DeleteMessage': 'the SQS event source mapping deletes processed messages with the function\'s role, as above',
  'sweeper:sqs:SendMessage': 'Lambda sends failed asynchronous invocations to the function\'s dead-letter queue with its role (https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-retain-records.html#invocation-dlq)',
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
