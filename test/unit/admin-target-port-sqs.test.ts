import { resolveTarget } from '../../bin/admin-target';
import type { LocalState } from '../../local/state-file';

// The defect guarded against: admin --port won over MSG_DYNAMODB_ENDPOINT/MSG_META_TABLE but not over the SQS
// variables that an earlier admin run in the same process left behind (useTarget writes
// MSG_SQS_ENDPOINT, MSG_SQS_QUEUE_PREFIX and MSG_SQS_QUEUE_URL_BASE into process.env). The
// local target then builds queue URLs from a deployed stack's prefix and URL base, or sends SQS
// calls to a stopped runtime's fauxqs.
describe('resolveTarget --port and the SQS environment of an earlier target', () => {
  const alive = () => true;

  it('does not keep a deployed stack queue prefix and URL base for the local runtime', () => {
    const state: LocalState = { pid: 4242, port: 24570, dynamodbEndpoint: 'http://127.0.0.1:9000', sqsEndpoint: 'http://127.0.0.1:9324', tables: { meta: 'msg-meta' } };
    const env = { MSG_META_TABLE: 'Stack-Meta', MSG_SQS_QUEUE_PREFIX: 'Stack-', MSG_SQS_QUEUE_URL_BASE: 'https://sqs.eu-west-1.amazonaws.com/123456789012/' };
    const t = resolveTarget({ port: '24570' }, env, () => state, alive);
    expect(t).toMatchObject({ kind: 'endpoint', endpoint: state.dynamodbEndpoint });
    expect(t.sqs).toEqual({ endpoint: state.sqsEndpoint });
  });

  it('does not send SQS calls to the endpoint an earlier local runtime left in the environment', () => {
    const state: LocalState = { pid: 4242, port: 24570, dynamodbEndpoint: 'http://127.0.0.1:9000', tables: { meta: 'msg-meta' } };
    const env = { MSG_DYNAMODB_ENDPOINT: 'http://127.0.0.1:7000', MSG_SQS_ENDPOINT: 'http://127.0.0.1:7001' };
    const t = resolveTarget({ port: '24570' }, env, () => state, alive);
    expect(t).toMatchObject({ kind: 'endpoint', endpoint: state.dynamodbEndpoint });
    expect(t.sqs.endpoint).not.toBe('http://127.0.0.1:7001');
  });
});
