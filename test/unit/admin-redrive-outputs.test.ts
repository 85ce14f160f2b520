import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { webhookQueueUrlFromOutputs } from '../../bin/admin-redrive';

function outputsFile(content: unknown): string {
  const file = join(mkdtempSync(join(tmpdir(), 'outputs-')), 'cdk-outputs.json');
  writeFileSync(file, JSON.stringify(content));
  return file;
}

describe('redrive: the webhook delivery queue from cdk-outputs.json', () => {
  const url = 'https://sqs.eu-west-1.amazonaws.com/123456789012/MessagingService-Queue';

  it('reads the WebhookQueueUrl output of the stack', () => {
    const outputs = outputsFile({ MessagingService: { ApiUrl: 'https://x/api/v1', WebhookQueueUrl: url } });
    expect(webhookQueueUrlFromOutputs({ outputs } as never)).toBe(url);
  });

  it('picks the stack named by --stack when the file holds several', () => {
    const outputs = outputsFile({ MessagingService: { WebhookQueueUrl: url }, 'MessagingService-dev': { WebhookQueueUrl: `${url}-dev` } });
    expect(webhookQueueUrlFromOutputs({ outputs, stack: 'MessagingService-dev' } as never)).toBe(`${url}-dev`);
    expect(webhookQueueUrlFromOutputs({ outputs } as never)).toBeUndefined();
  });

  it('gives none without an outputs file', () => {
    expect(webhookQueueUrlFromOutputs({} as never)).toBeUndefined();
  });
});
