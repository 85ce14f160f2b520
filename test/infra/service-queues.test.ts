/**
 * Service queues in the stack (DESIGN.md section 6): no DynamoDB message table, SQS permissions
 * limited to the stack's queue-name prefix and to what each function's code calls, and the
 * receipt-handle signing key in a generated secret only the queues function may read.
 */
import { bundleText } from './bundle';
import { TABLES } from '../../lambda/core/storage/tables';
import { RECEIPT_KEY_READERS, SERVICE_QUEUE_ACCESS, type FunctionId } from '../../lib/table-access';
import { SQS_QUEUE_PREFIX_OUTPUT, SQS_QUEUE_URL_BASE_OUTPUT, sqsQueuePrefix } from '../../lib/stack-outputs';
import { actions, defaultStack, type Statement } from './stack';

const { stack, template, logicalId, statementsOf } = defaultStack();
const resources = template.toJSON().Resources as Record<string, { Type: string; Properties: any }>;
const functionIds = [...stack.functions.all.keys()];

const PREFIX_ARN = { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':sqs:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, `:${sqsQueuePrefix('Messaging')}*`]] };
const isPrefixGrant = (s: Statement) => JSON.stringify(s.Resource) === JSON.stringify(PREFIX_ARN);
const isDeliveryQueueGrant = (s: Statement) => JSON.stringify(s.Resource) === JSON.stringify({ 'Fn::GetAtt': [logicalId(stack.webhooks.queue), 'Arn'] });

/**
 * The SQS commands the bundle of function `id` sends: imported from the SQS client (esbuild keeps
 * every imported name of an external module) and constructed (`new XCommand(`) somewhere.
 */
function sqsCommandsOf(id: FunctionId): string[] {
  const out = bundleText(id);
  const imports = [...out.matchAll(/import\s*\{([^}]*)\}\s*from\s*"@aws-sdk\/client-sqs"/g)].flatMap((m) => m[1].split(','));
  const sqs = new Set(imports.map((i) => i.trim().split(/\s+as\s+/)[0]).filter((n) => n.endsWith('Command')));
  return [...new Set([...out.matchAll(/new (\w+Command)\(/g)].map((m) => m[1]).filter((n) => sqs.has(n)))].sort();
}

/** The IAM action a command needs (batch commands need the single action). */
const actionOf = (command: string) => `sqs:${command.replace(/Command$/, '').replace(/Batch$/, '')}`;

describe('service queues', () => {
  it('keeps queue messages out of DynamoDB: no message table, and no table has a local index keyed by visibility or expiry', () => {
    // (scheduler holds long-delayed messages and schedules, not queue messages: docs/schedules.md)
    expect(Object.keys(TABLES).sort()).toEqual(['deliveryLog', 'idempotency', 'meta', 'scheduler', 'streamLog', 'subscriptionLog']);
    template.resourceCountIs('AWS::DynamoDB::Table', Object.keys(TABLES).length);
    const indexes = Object.values(template.findResources('AWS::DynamoDB::Table')).flatMap((t) => (t.Properties.LocalSecondaryIndexes ?? []).map((i: { IndexName: string }) => i.IndexName));
    expect(indexes.filter((n: string) => /queue/i.test(n))).toEqual([]);
  });

  it.each(functionIds)('%s may use exactly its SQS actions, and only on this stack\'s queue prefix', (id) => {
    const onPrefix = statementsOf(id).filter(isPrefixGrant);
    const granted = onPrefix.flatMap(actions).sort();
    expect(granted).toEqual([...SERVICE_QUEUE_ACCESS[id]].sort());
    for (const s of statementsOf(id)) {
      if (!actions(s).some((a) => a.startsWith('sqs:'))) continue;
      expect(s.Effect).toBe('Allow');
      expect(s.Resource).not.toBe('*');
      expect(JSON.stringify(s.Resource)).not.toMatch(/:sqs:[^"]*:\*"/); // never every queue of the account
    }
  });

  it.each(functionIds)('%s is granted every SQS action its code calls', (id) => {
    const granted = new Set(statementsOf(id).filter((s) => isPrefixGrant(s) || isDeliveryQueueGrant(s)).flatMap(actions));
    for (const command of sqsCommandsOf(id)) {
      // ListQueues and ListQueueTags serve the admin CLI only; no function calls them.
      expect({ command, granted: granted.has(actionOf(command)) }).toEqual({ command, granted: true });
    }
    if (SERVICE_QUEUE_ACCESS[id].includes('sqs:CreateQueue')) expect(granted).toContain('sqs:TagQueue');
  });

  it('gives every function the prefix, URL base and stack name it builds queue names and URLs from', () => {
    for (const id of functionIds) {
      const env = resources[logicalId(stack.functions.all.get(id)!)].Properties.Environment.Variables;
      expect(env).toMatchObject({ MSG_SQS_QUEUE_PREFIX: 'Messaging_q_', MSG_STACK_NAME: 'Messaging' });
      expect(JSON.stringify(env.MSG_SQS_QUEUE_URL_BASE)).toContain('AWS::AccountId');
    }
    expect(template.findOutputs(SQS_QUEUE_PREFIX_OUTPUT)[SQS_QUEUE_PREFIX_OUTPUT].Value).toBe('Messaging_q_');
    expect(template.findOutputs(SQS_QUEUE_URL_BASE_OUTPUT)).toHaveProperty(SQS_QUEUE_URL_BASE_OUTPUT);
  });

  it('generates the signing key in Secrets Manager and lets only the receipt-handle functions read it', () => {
    const secretId = logicalId(stack.serviceQueues.receiptKey);
    expect(resources[secretId].Properties.GenerateSecretString).toMatchObject({ PasswordLength: 64, ExcludePunctuation: true });
    for (const id of functionIds) {
      const reads = statementsOf(id).some((s) => actions(s).includes('secretsmanager:GetSecretValue') && JSON.stringify(s.Resource).includes(secretId));
      const env = resources[logicalId(stack.functions.all.get(id)!)].Properties.Environment.Variables;
      expect({ id, reads, hasArn: 'MSG_RECEIPT_KEY_SECRET_ARN' in env }).toEqual({ id, reads: RECEIPT_KEY_READERS.includes(id), hasArn: RECEIPT_KEY_READERS.includes(id) });
      expect(env.MSG_RECEIPT_KEY).toBeUndefined(); // the key itself never sits in the environment
    }
  });
});

describe('sqsQueuePrefix', () => {
  it('ends with _q_, so no stack prefix starts another stack\'s queue names', () => {
    expect(sqsQueuePrefix('MessagingService')).toBe('MessagingService_q_');
    expect(`${sqsQueuePrefix('MessagingService-dev')}01ABC`.startsWith(sqsQueuePrefix('MessagingService'))).toBe(false);
  });

  it('leaves room for a 26-character queue id within SQS\'s 80 characters, unique per long stack name', () => {
    const a = sqsQueuePrefix(`${'x'.repeat(60)}-a`);
    const b = sqsQueuePrefix(`${'x'.repeat(60)}-b`);
    expect(a).not.toBe(b);
    for (const p of [a, b, sqsQueuePrefix('y'.repeat(48))]) {
      expect(p.length + 26).toBeLessThanOrEqual(80);
      expect(p).toMatch(/^[A-Za-z0-9_-]+$/);
    }
  });
});
