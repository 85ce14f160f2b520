/**
 * What the stack gives the functions for service queues (DESIGN.md section 6), whose SQS queues
 * the queues API creates at runtime: the name prefix of those queues and their URL base in the
 * environment, the SQS actions of lib/table-access.ts `SERVICE_QUEUE_ACCESS` on
 * `arn:aws:sqs:<region>:<account>:<prefix>*` only, and the receipt-handle signing key: a Secrets
 * Manager secret the stack generates, readable by `RECEIPT_KEY_READERS` only.
 *
 * Queues made at runtime are not CloudFormation resources: `cdk destroy` leaves them (and their
 * messages) behind; `npm run admin -- sqs-queues list|delete --outputs cdk-outputs.json` finds and
 * removes them by the prefix.
 */
import { Aws, RemovalPolicy, Stack, Validations, ArnFormat } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { sqsQueuePrefix } from '../stack-outputs';
import { RECEIPT_KEY_READERS, SERVICE_QUEUE_ACCESS, type FunctionId } from '../table-access';
import type { Functions } from './functions';

export interface ServiceQueuesProps {
  /** Every function of the stack (call after the last one is added). */
  readonly functions: Functions;
  /** Of the signing-key secret. @default RemovalPolicy.RETAIN */
  readonly removalPolicy?: RemovalPolicy;
}

export class ServiceQueues extends Construct {
  /** Name prefix of the SQS queues of this stack's service queues. */
  readonly prefix: string;
  /** `https://sqs.<region>.<url suffix>/<account>/`: a queue's URL is this plus its name. */
  readonly urlBase: string;
  readonly receiptKey: Secret;
  /** The ARN pattern the grants cover. */
  readonly queueArns: string;

  constructor(scope: Construct, id: string, props: ServiceQueuesProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.prefix = sqsQueuePrefix(stack.stackName);
    this.urlBase = `https://sqs.${Aws.REGION}.${Aws.URL_SUFFIX}/${Aws.ACCOUNT_ID}/`;
    this.queueArns = stack.formatArn({ service: 'sqs', resource: `${this.prefix}*`, arnFormat: ArnFormat.NO_RESOURCE_NAME });

    this.receiptKey = new Secret(this, 'ReceiptKey', {
      description: 'Signing key of queue receipt handles (HMAC-SHA256); rotating it invalidates the handles in flight',
      generateSecretString: { passwordLength: 64, excludePunctuation: true },
      removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN,
    });
    Validations.of(this.receiptKey).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'No automatic rotation: a rotation makes every receipt handle in flight invalid (acks answer 409 and those messages are delivered again), so it is a deliberate operator action (README "Operate").',
    });

    for (const [fnId, fn] of props.functions.all) {
      fn.addEnvironment('MSG_SQS_QUEUE_PREFIX', this.prefix);
      fn.addEnvironment('MSG_SQS_QUEUE_URL_BASE', this.urlBase);
      fn.addEnvironment('MSG_STACK_NAME', stack.stackName);
      const actions = SERVICE_QUEUE_ACCESS[fnId as FunctionId];
      if (actions.length) {
        fn.addToRolePolicy(new PolicyStatement({ actions, resources: [this.queueArns] }));
        Validations.of(fn.role!).acknowledge({
          id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:sqs:<AWS::Region>:<AWS::AccountId>:${this.prefix}*]`,
          reason: `SQS queues of service queues are created at runtime, one per queue, named ${this.prefix}<queue id>: the grant covers exactly this stack's prefix.`,
        });
      }
      if (RECEIPT_KEY_READERS.includes(fnId as FunctionId)) {
        // Only the read the code makes (Powertools getSecret → GetSecretValue); grantRead would
        // add DescribeSecret, which nothing calls.
        fn.addToRolePolicy(new PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [this.receiptKey.secretArn] }));
        fn.addEnvironment('MSG_RECEIPT_KEY_SECRET_ARN', this.receiptKey.secretArn);
      }
    }
  }
}
