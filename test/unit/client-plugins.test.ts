/**
 * Every SDK client of the service is built without the SDK's logger middleware, which would copy
 * each call's input and output for a logger that discards them (lambda/core/client-plugins.ts).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { withClientPlugins } from '../../lambda/core/client-plugins';

const names = (c: { middlewareStack: { identify(): string[] } }) => c.middlewareStack.identify().map((s) => s.split(' ')[0]);

it('removes the SDK logger middleware from the clients it builds, and only that', () => {
  const plain = new DynamoDBClient({ region: 'us-east-1' });
  expect(names(plain)).toContain('loggerMiddleware');
  const built = withClientPlugins('dynamodb', new DynamoDBClient({ region: 'us-east-1' }));
  expect(names(built)).not.toContain('loggerMiddleware');
  expect(names(built).length).toBe(names(plain).length - 1);
  expect(names(withClientPlugins('sqs', new SQSClient({ region: 'us-east-1' })))).not.toContain('loggerMiddleware');
});
