/**
 * Parses the JSON body into `api.body`. middy's http-json-body-parser answers malformed JSON with a
 * 422 and refuses requests without a JSON content type; the API needs 400 INVALID_REQUEST for a
 * body that is not JSON or not an object (DESIGN.md section 13) and accepts a missing body as
 * `{}`, hence this small parser.
 */
import type { MiddlewareObj } from '@middy/core';
import { invalidRequest } from '../rules/errors';
import { apiRequest, type ApiEvent } from './api-request';

export function jsonBody(): MiddlewareObj<ApiEvent> {
  return {
    before: async (request) => {
      const api = apiRequest(request.event);
      const { body, isBase64Encoded } = request.event;
      if (body === null || body === undefined || body === '') {
        api.body = {};
        return;
      }
      const text = isBase64Encoded ? Buffer.from(body, 'base64').toString('utf8') : body;
      api.bodyBytes = Buffer.byteLength(text, 'utf8');
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        throw invalidRequest('The request body is not valid JSON. Send a JSON object with Content-Type: application/json.');
      }
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
        throw invalidRequest('The request body must be a JSON object.');
      }
      api.body = parsed;
    },
  };
}
