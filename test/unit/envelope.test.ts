import { failure, isoTime, success } from '../../lambda/domain/envelope';
import {
  alreadyExists, ApiError, insufficientPermissions, internalError, invalidApiKey, invalidRequest, methodNotAllowed, notFound,
  routeNotFound, validationError,
} from '../../lambda/domain/errors';
import { GATEWAY_ANSWERS, gatewayAnswerBody } from '../../lambda/domain/gateway-responses';

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
