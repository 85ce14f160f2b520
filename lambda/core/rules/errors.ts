/**
 * Typed API errors. Every error the API answers with is an {@link ApiError}: it carries the HTTP
 * status, the spec's error code and an object of details. One middleware (middleware/envelope.ts)
 * turns them into the response envelope; anything else becomes a 500 INTERNAL_ERROR without
 * internals (DESIGN.md section 3).
 */
export type Details = Record<string, unknown>;

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Details = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export interface FieldProblem {
  field: string;
  message: string;
}

/** 400 INVALID_REQUEST: not JSON, not an object, a field of the wrong type, a bad query value. */
export const invalidRequest = (message: string, details: Details = {}) =>
  new ApiError(400, 'INVALID_REQUEST', message, details);

/** 422 VALIDATION_ERROR with `details.fields` naming every invalid field. */
export const validationError = (fields: FieldProblem[]) =>
  new ApiError(
    422,
    'VALIDATION_ERROR',
    `Invalid value for ${fields.map((f) => f.field).join(', ')}: ${fields[0]?.message ?? 'invalid'}`,
    { fields },
  );

export const invalidApiKey = (message = 'The API key is missing or invalid. Send Authorization: Bearer <API_KEY>.') =>
  new ApiError(401, 'INVALID_API_KEY', message);

export const insufficientPermissions = (scope: string) =>
  new ApiError(403, 'INSUFFICIENT_PERMISSIONS', `This API key lacks the "${scope}" scope needed for this operation.`, {
    required_scope: scope,
  });

export const notFound = (code: string, what: string) => new ApiError(404, code, `${what} does not exist.`);

export const routeNotFound = (method: string, path: string) =>
  new ApiError(404, 'NOT_FOUND', `No endpoint at ${method} ${path}. See the API reference for the paths under /api/v1.`);

export const methodNotAllowed = (method: string, allowed: string[]) =>
  new ApiError(
    405,
    'METHOD_NOT_ALLOWED',
    `${method} is not allowed here; allowed: ${allowed.join(', ')}.`,
    { allowed },
    { Allow: allowed.join(', ') },
  );

export const alreadyExists = (code: string, what: string) => new ApiError(409, code, `${what} already exists.`);

export const internalError = () =>
  new ApiError(500, 'INTERNAL_ERROR', 'The service failed to process the request. Retry later; if it persists, report the request id.');

/**
 * 503 SERVICE_UNAVAILABLE with `Retry-After`: a dependency throttled the request, said it was
 * unavailable or did not answer in time (domain/dependency-errors.ts). Like a 500, the request
 * may or may not have taken effect; retrying it is safe where the operation is at least once.
 */
export const serviceUnavailable = (retryAfterSeconds: number) =>
  new ApiError(
    503,
    'SERVICE_UNAVAILABLE',
    `The service is briefly overloaded or a dependency is unavailable. Retry after ${retryAfterSeconds} s.`,
    {},
    { 'Retry-After': String(retryAfterSeconds) },
  );
