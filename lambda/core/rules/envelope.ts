/**
 * The response envelope of every endpoint (SPEC.md "Response envelope"): `{success, data, error}`,
 * `error` being `{code, message, details}` with `details` always an object.
 */
import type { ApiError, Details } from './errors';

export interface SuccessEnvelope<T extends object = object> {
  success: true;
  data: T;
  error: null;
}

export interface ErrorEnvelope {
  success: false;
  data: null;
  error: { code: string; message: string; details: Details };
}

/** @example success({ name: 'acme' }) // {success: true, data: {name: 'acme'}, error: null} */
export const success = <T extends object>(data: T): SuccessEnvelope<T> => ({ success: true, data, error: null });

export const failure = (e: Pick<ApiError, 'code' | 'message' | 'details'>): ErrorEnvelope => ({
  success: false,
  data: null,
  error: { code: e.code, message: e.message, details: e.details ?? {} },
});

/** ISO 8601 UTC with milliseconds, the only timestamp format of the API (DESIGN.md section 3). */
export const isoTime = (ms: number): string => new Date(ms).toISOString();

export const JSON_HEADERS = { 'Content-Type': 'application/json' } as const;
