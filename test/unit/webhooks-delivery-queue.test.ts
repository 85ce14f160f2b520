import { batchesOf, buildSendBatches } from '../../lambda/core/adapters/sqs';
import { executionName } from '../../lambda/webhooks/storage/retry-workflow';
import { deliveryMessage } from '../../lambda/webhooks/storage/delivery-queue';

describe('SendMessageBatch requests', () => {
  it('carry at most 10 entries each', () => {
    const cmds = buildSendBatches('https://sqs.example/q', Array.from({ length: 23 }, (_, i) => `job-${i}`));
    expect(cmds.map((c) => c.input.Entries?.length)).toEqual([10, 10, 3]);
    expect(cmds[0].input.QueueUrl).toBe('https://sqs.example/q');
    expect(cmds[2].input.Entries?.map((e) => [e.Id, e.MessageBody])).toEqual([['20', 'job-20'], ['21', 'job-21'], ['22', 'job-22']]);
  });

  it('stay under 1 MiB per call', () => {
    const big = 'x'.repeat(300 * 1024);
    expect(batchesOf([big, big, big, big, 'small']).map((b) => b.length)).toEqual([3, 2]);
  });

  it('send nothing for no jobs', () => expect(buildSendBatches('q', [])).toEqual([]));
});

describe('delivery queue messages', () => {
  it('carry their namespace as MessageGroupId (a fair queue), whether given as a job or as its body', () => {
    const job = { namespace: 'acme', webhook_id: 'w1', webhook_name: 'orders', message: { p: 'é' } };
    const fromJob = deliveryMessage(job);
    expect(fromJob).toEqual({ body: '{"namespace":"acme","webhook_id":"w1","webhook_name":"orders","message":{"p":"\\u00e9"}}', groupId: 'acme' });
    expect(deliveryMessage(fromJob.body, 3)).toEqual({ ...fromJob, delaySeconds: 3 });
    const [entry] = buildSendBatches('https://sqs.example/q', [deliveryMessage(job, 2)])[0].input.Entries ?? [];
    expect(entry).toMatchObject({ MessageGroupId: 'acme', DelaySeconds: 2 });
  });
});

describe('executionName', () => {
  it('is at most 80 characters of the allowed set', () => {
    const n = executionName('01ABC/def', 'x'.repeat(100));
    expect(n).toHaveLength(80);
    expect(n).toMatch(/^[A-Za-z0-9_-]+$/);
  });
});
