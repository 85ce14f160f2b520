/**
 * What the extensions add to the stack: the delivery log table (keys, sparse index, TTL) that
 * only the webhook functions may use; the webhooks function's right to queue replays on the
 * delivery queue; and ordered queues, whose SQS FIFO queues fall under the same name-prefix grant
 * as every service queue, with no SQS action added.
 */
import { TABLES } from '../../lambda/core/storage/tables';
import { SERVICE_QUEUE_ACCESS, TABLE_ACCESS, type FunctionId } from '../../lib/table-access';
import { sqsQueuePrefix } from '../../lib/stack-outputs';
import { fifoQueueName } from '../../lambda/core/rules/ordering';
import { newId } from '../../lambda/core/rules/clock';
import { actions, defaultStack } from './stack';

const { stack, template, logicalId, statementsOf } = defaultStack();
const resources = template.toJSON().Resources as Record<string, { Type: string; Properties: any }>;
const functionIds = [...stack.functions.all.keys()];
const WEBHOOK_FUNCTIONS: FunctionId[] = ['webhooks', 'webhookDelivery', 'webhookAttempt'];

const envOf = (id: FunctionId) => resources[logicalId(stack.functions.all.get(id)!)].Properties.Environment.Variables;

describe('delivery log table', () => {
  const table = resources[logicalId(stack.tables.byId.deliveryLog)].Properties;

  it('keys items by message, lists attempts through a sparse index by (webhook, outcome, shard) and time, and expires them by TTL', () => {
    expect(table.KeySchema).toEqual([
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ]);
    expect(table.GlobalSecondaryIndexes).toEqual([
      { IndexName: 'attemptsByTime', KeySchema: [{ AttributeName: 'lpk', KeyType: 'HASH' }, { AttributeName: 'at', KeyType: 'RANGE' }], Projection: { ProjectionType: 'ALL' } },
    ]);
    expect(table.TimeToLiveSpecification).toEqual({ AttributeName: 'ttl', Enabled: true });
    expect(table).toMatchObject({ BillingMode: 'PAY_PER_REQUEST', SSESpecification: { SSEEnabled: true }, PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true } });
    expect(TABLES.deliveryLog.envVar).toBe('MSG_DELIVERY_LOG_TABLE');
  });

  it.each(functionIds)('%s may read and write it (table and index) only if it is a webhook function', (id) => {
    const tableId = logicalId(stack.tables.byId.deliveryLog);
    const onTable = statementsOf(id).filter((s) => JSON.stringify(s.Resource).includes(`"${tableId}"`));
    const granted = new Set(onTable.flatMap(actions));
    if (WEBHOOK_FUNCTIONS.includes(id)) {
      expect(TABLE_ACCESS[id].deliveryLog).toBe('readWrite');
      for (const a of ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:BatchGetItem']) expect(granted).toContain(a);
      // Not its index: no code queries attemptsByTime (it holds only attempt items written before
      // pages); iam.test.ts grants indexes by what the bundles query.
      expect(JSON.stringify(onTable.map((s) => s.Resource))).not.toContain('/index/');
      expect(envOf(id).MSG_DELIVERY_LOG_TABLE).toEqual({ Ref: tableId });
    } else {
      expect(granted.size).toBe(0);
    }
  });
});

describe('replay', () => {
  it('lets the webhooks function queue delivery jobs on the delivery queue, and tells it where the queue is', () => {
    const queueArn = { 'Fn::GetAtt': [logicalId(stack.webhooks.queue), 'Arn'] };
    const sends = statementsOf('webhooks').filter((s) => JSON.stringify(s.Resource) === JSON.stringify(queueArn)).flatMap(actions);
    expect(sends).toContain('sqs:SendMessage');
    expect(envOf('webhooks').MSG_WEBHOOK_QUEUE_URL).toEqual({ Ref: logicalId(stack.webhooks.queue) });
  });
});

describe('ordered queues', () => {
  it('are named under the stack\'s prefix (the grant covers <prefix>*) within 80 characters', () => {
    const prefix = sqsQueuePrefix('Messaging');
    const name = fifoQueueName(prefix, newId());
    expect(name.startsWith(prefix)).toBe(true);
    expect(name.length).toBeLessThanOrEqual(80);
    const grant = statementsOf('queues').find((s) => actions(s).includes('sqs:CreateQueue'));
    expect(JSON.stringify(grant?.Resource)).toContain(`:${prefix}*`);
  });

  it('need no SQS action beyond those of standard queues (FIFO attributes go with CreateQueue, groups with SendMessage)', () => {
    expect(SERVICE_QUEUE_ACCESS.queues.sort()).toEqual(
      // GetQueueAttributes: the counts of GET /queues/{name}/stats, for either kind of queue.
      ['sqs:ChangeMessageVisibility', 'sqs:CreateQueue', 'sqs:DeleteMessage', 'sqs:DeleteQueue', 'sqs:GetQueueAttributes', 'sqs:ReceiveMessage', 'sqs:SendMessage', 'sqs:TagQueue'].sort(),
    );
    expect(SERVICE_QUEUE_ACCESS.publish).toEqual(['sqs:SendMessage']);
  });
});
