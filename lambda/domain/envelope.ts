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

export type Envelope = SuccessEnvelope | ErrorEnvelope;

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

/**
 * Lambda refuses a response above 6 MB (a 502 in API Gateway, after a consume has already claimed
 * or advanced): consumes stop adding messages at this many bytes of Lambda response, which leaves
 * room for the envelope, headers and the proxy integration's own JSON.
 */
export const CONSUME_RESPONSE_BUDGET_BYTES = 5 * 1024 * 1024;

/**
 * Bytes `value` adds to a Lambda proxy response: its JSON text is the `body` string of the proxy
 * result, itself JSON, so the text is escaped twice (a `"` in a payload costs 4 bytes, a control
 * character 7).
 */
export const proxyResponseBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(JSON.stringify(value)), 'utf8') - 2;
