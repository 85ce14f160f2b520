import middy from '@middy/core';
import { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { failure, isoTime, success } from '../../lambda/core/rules/envelope';
import {
  alreadyExists, ApiError, insufficientPermissions, internalError, invalidApiKey, invalidRequest, methodNotAllowed, notFound,
  routeNotFound, serviceUnavailable, validationError,
} from '../../lambda/core/rules/errors';
import { isPassingDependencyFailure } from '../../lambda/core/rules/dependency-errors';
import { envelope } from '../../lambda/core/middleware/envelope';
import type { ApiEvent } from '../../lambda/core/middleware/api-request';
import { GATEWAY_ANSWERS, gatewayAnswerBody } from '../../lambda/core/rules/gateway-responses';

describe('envelope', () => {
  it('wraps data in a success with a null error', () => {
    expect(success({ name: 'acme' })).toEqual({ success: true, data: { name: 'acme' }, error: null });
  });

  it('turns an API error into a failure with null data and its code, message and details', () => {
    expect(failure(invalidRequest('bad', { fields: [] }))).toEqual({
      success: false,
      data: null,
      error: { code: 'INVALID_REQUEST', message: 'bad', details: { fields: [] } },
    });
  });

  it('always gives details as an object', () => {
    expect(failure({ code: 'X', message: 'm', details: undefined as never }).error.details).toEqual({});
    expect(failure(notFound('QUEUE_NOT_FOUND', 'Queue q')).error.details).toEqual({});
  });

  it('formats timestamps as ISO 8601 UTC with milliseconds', () => {
    expect(isoTime(0)).toBe('1970-01-01T00:00:00.000Z');
    expect(isoTime(Date.UTC(2026, 10, 22, 10, 0, 0, 5))).toBe('2026-11-22T10:00:00.005Z');
  });
});

describe('API errors', () => {
  it.each([
    ['invalidRequest', 400, 'INVALID_REQUEST', invalidRequest('Body is not JSON.')],
    ['validationError', 422, 'VALIDATION_ERROR', validationError([{ field: 'f', message: 'm' }])],
    ['invalidApiKey', 401, 'INVALID_API_KEY', invalidApiKey()],
    ['insufficientPermissions', 403, 'INSUFFICIENT_PERMISSIONS', insufficientPermissions('manage')],
    ['notFound', 404, 'STREAM_NOT_FOUND', notFound('STREAM_NOT_FOUND', 'Stream s')],
    ['routeNotFound', 404, 'NOT_FOUND', routeNotFound('GET', '/nope')],
    ['methodNotAllowed', 405, 'METHOD_NOT_ALLOWED', methodNotAllowed('PUT', ['GET'])],
    ['alreadyExists', 409, 'QUEUE_ALREADY_EXISTS', alreadyExists('QUEUE_ALREADY_EXISTS', 'Queue q')],
    ['internalError', 500, 'INTERNAL_ERROR', internalError()],
    ['serviceUnavailable', 503, 'SERVICE_UNAVAILABLE', serviceUnavailable(1)],
  ])('%s carries status %i and code %s with a human message', (_name, status, code, e) => {
    expect(e).toBeInstanceOf(ApiError);
    expect(e).toBeInstanceOf(Error);
    expect({ status: e.status, code: e.code }).toEqual({ status, code });
    expect(e.message.length).toBeGreaterThan(3);
    expect(typeof e.details).toBe('object');
  });

  it('names every invalid field in a validation error', () => {
    const e = validationError([
      { field: 'max_messages', message: 'must be at most 100' },
      { field: 'name', message: 'is required' },
    ]);
    expect(e.details).toEqual({ fields: [{ field: 'max_messages', message: 'must be at most 100' }, { field: 'name', message: 'is required' }] });
    expect(e.message).toContain('max_messages, name');
  });

  it('lists the allowed methods of a 405 in details and in the Allow header', () => {
    const e = methodNotAllowed('DELETE', ['GET', 'POST']);
    expect(e.details).toEqual({ allowed: ['GET', 'POST'] });
    expect(e.headers).toEqual({ Allow: 'GET, POST' });
  });

  it('names the missing scope of a 403', () => {
    expect(insufficientPermissions('publish').details).toEqual({ required_scope: 'publish' });
  });

  it('tells nothing about internals in a 500', () => {
    expect(internalError().message).not.toMatch(/stack|exception|at \w+ \(/i);
    expect(internalError().details).toEqual({});
  });
});

describe('gateway answers', () => {
  it.each(Object.entries(GATEWAY_ANSWERS))('%s is an envelope with its code and empty details', (_name, answer) => {
    expect(JSON.parse(gatewayAnswerBody(answer))).toEqual({ success: false, data: null, error: { code: answer.code, message: answer.message, details: {} } });
  });

  it('matches the statuses of DESIGN.md section 3', () => {
    expect(GATEWAY_ANSWERS.unauthorized).toMatchObject({ status: 401, code: 'INVALID_API_KEY' });
    expect(GATEWAY_ANSWERS.notFound).toMatchObject({ status: 404, code: 'NOT_FOUND' });
    expect(GATEWAY_ANSWERS.methodNotAllowed).toMatchObject({ status: 405, code: 'METHOD_NOT_ALLOWED' });
    expect(GATEWAY_ANSWERS.throttled).toMatchObject({ status: 429, code: 'RATE_LIMIT_EXCEEDED' });
    expect(GATEWAY_ANSWERS.internal).toMatchObject({ status: 500, code: 'INTERNAL_ERROR' });
  });
});

describe('dependency failures', () => {
  const sdkError = (name: string, status: number, extra: object = {}) =>
    Object.assign(new Error(`${name} from the service`), { name, $fault: status >= 500 ? 'server' : 'client', $metadata: { httpStatusCode: status }, ...extra });

  it.each([
    ['DynamoDB ProvisionedThroughputExceededException', sdkError('ProvisionedThroughputExceededException', 400)],
    ['DynamoDB ThrottlingException', sdkError('ThrottlingException', 400)],
    ['DynamoDB RequestLimitExceeded', sdkError('RequestLimitExceeded', 400)],
    ['SQS RequestThrottled', sdkError('RequestThrottled', 400)],
    ['any 503 ServiceUnavailable', sdkError('ServiceUnavailable', 503)],
    ['an error the SDK marks as throttling', sdkError('SomethingNew', 400, { $retryable: { throttling: true } })],
    ['a timed-out call', Object.assign(new Error('Connection timed out after 1000 ms'), { name: 'TimeoutError' })],
    ['a reset connection', Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })],
    ['a throttle wrapped as a cause (Powertools idempotency)', Object.assign(new Error('Failed to save record'), { cause: sdkError('ThrottlingException', 400) })],
    ['a throttle wrapped as a reason (the SQS sender)', Object.assign(new Error('SQS did not store 3 message(s)'), { name: 'SqsSendError', reason: sdkError('RequestThrottled', 400) })],
    ['a single write that met a transaction', sdkError('TransactionConflictException', 400)],
    [
      'a transaction cancelled only on conflicts (nothing written)',
      sdkError('TransactionCanceledException', 400, { CancellationReasons: [{ Code: 'None' }, { Code: 'TransactionConflict' }] }),
    ],
    ['a transaction cancelled as throttled (ThrottlingError)', sdkError('TransactionCanceledException', 400, { CancellationReasons: [{ Code: 'ThrottlingError' }] })],
    [
      'a transaction cancelled on provisioned capacity and a conflict',
      sdkError('TransactionCanceledException', 400, { CancellationReasons: [{ Code: 'ProvisionedThroughputExceeded' }, { Code: 'None' }, { Code: 'TransactionConflict' }] }),
    ],
  ])('counts %s as passing', (_what, e) => {
    expect(isPassingDependencyFailure(e)).toBe(true);
  });

  it.each([
    ['a bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['DynamoDB InternalServerError (a 500 is not a throttle)', sdkError('InternalServerError', 500)],
    ['a validation error of the SDK', sdkError('ValidationException', 400)],
    ['a failed condition', sdkError('ConditionalCheckFailedException', 400)],
    [
      'a transaction cancelled on a failed condition too',
      sdkError('TransactionCanceledException', 400, { CancellationReasons: [{ Code: 'ConditionalCheckFailed' }, { Code: 'TransactionConflict' }] }),
    ],
    [
      'a transaction cancelled as throttled and on a failed condition',
      sdkError('TransactionCanceledException', 400, { CancellationReasons: [{ Code: 'ThrottlingError' }, { Code: 'ConditionalCheckFailed' }] }),
    ],
    ['a transaction cancelled on a validation error', sdkError('TransactionCanceledException', 400, { CancellationReasons: [{ Code: 'ValidationError' }] })],
    ['a transaction cancelled with no reason given', sdkError('TransactionCanceledException', 400, { CancellationReasons: [{ Code: 'None' }] })],
    ['a cause that points at itself', Object.assign(new Error('loop'), { name: 'X' })],
  ])('counts %s as not passing', (_what, e) => {
    const err = e as Error & { cause?: unknown };
    if (err.message === 'loop') err.cause = err;
    expect(isPassingDependencyFailure(e)).toBe(false);
  });

  const answer = (thrown: unknown) =>
    middy<ApiEvent, APIGatewayProxyResult>({ timeoutEarlyInMillis: 0 })
      .use(envelope({ logger: new Logger({ logLevel: 'SILENT' }) }))
      .handler(async () => {
        throw thrown;
      })({ api: { responseHeaders: { 'X-RateLimit-Limit': '1000' } } } as unknown as ApiEvent, {} as never);

  it('answers a throttled dependency with 503 SERVICE_UNAVAILABLE and Retry-After, keeping the other headers', async () => {
    const out = await answer(sdkError('ProvisionedThroughputExceededException', 400));
    expect(out.statusCode).toBe(503);
    expect(out.headers).toMatchObject({ 'Retry-After': '1', 'X-RateLimit-Limit': '1000' });
    expect(JSON.parse(out.body)).toEqual({ success: false, data: null, error: { code: 'SERVICE_UNAVAILABLE', message: expect.stringContaining('Retry after 1 s'), details: {} } });
  });

  it('answers anything else unexpected with 500 INTERNAL_ERROR and no Retry-After', async () => {
    const out = await answer(sdkError('InternalServerError', 500));
    expect(out.statusCode).toBe(500);
    expect(out.headers?.['Retry-After']).toBeUndefined();
    expect(JSON.parse(out.body).error.code).toBe('INTERNAL_ERROR');
  });

  it('tells nothing about internals in a 503', () => {
    expect(serviceUnavailable(1).message).not.toMatch(/Throughput|Dynamo|SQS|exception/i);
    expect(serviceUnavailable(1).details).toEqual({});
  });
});
