/**
 * In the local runtime every handler shares one Powertools logger, where each function of the
 * stack has its own. A webhook delivery must run as the delivery function does in Lambda, through
 * its middy handler with a Lambda context of its own (`function_name` msg-webhookDelivery), so its
 * log lines do not carry the context of the API request that ran last in the process (a failed
 * delivery logged `function_name: msg-publish`).
 */
import { logger } from '../../lambda/core/observability';
import { webhookTestbed } from '../fixtures/webhook-testbed';

jest.setTimeout(60_000);

const bed = webhookTestbed('log-context');

describe('local webhook delivery logs', () => {
  it('runs each delivery with the delivery function\'s Lambda context (injectLambdaContext), not the last request\'s', async () => {
    const contexts: string[] = [];
    const add = logger.addContext.bind(logger);
    const spy = jest.spyOn(logger, 'addContext').mockImplementation((context) => {
      contexts.push(context.functionName);
      add(context);
    });
    try {
      // Nothing listens on port 9 of loopback: the first attempt fails at once, and no retry follows.
      expect((await bed.call('POST', '/webhooks', { name: 'down', url: 'http://127.0.0.1:9/hook', topic_filter: 'down/#', retry_count: 0 })).status).toBe(201);
      expect((await bed.call('POST', '/topics/down/now/messages', { payload: 'x' })).status).toBe(201);
      const deadline = Date.now() + 45_000;
      let status: { failure_count?: number } = {};
      while (status.failure_count !== 1 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 300));
        status = ((await bed.call('GET', '/webhooks/down/status')).body as { data: typeof status }).data;
      }
      expect(status.failure_count).toBe(1);
      expect(contexts).toContain('msg-webhookDelivery');
    } finally {
      spy.mockRestore();
    }
  });
});
