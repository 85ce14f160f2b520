/**
 * The OpenAPI rows and `data` schemas of applications and portal access
 * (docs/portal.md). Kept apart from ./operations.ts and ./schemas.ts, which spread them in.
 */
import type { OperationDoc } from './operations';
import type { JsonSchema } from './schemas';
import { createApplicationSchema, METADATA_LIMITS, patchApplicationSchema } from '../applications/rules';
import { portalAccessSchema, SESSION_DAYS } from '../core/rules/portal';
import { DEFAULT_LIMITS } from '../core/rules/resource-limits';

const str = (description?: string): JsonSchema => ({ type: 'string', ...(description ? { description } : {}) });
const int = (description?: string, minimum = 0): JsonSchema => ({ type: 'integer', minimum, ...(description ? { description } : {}) });
const time = (description = 'ISO 8601 UTC with milliseconds, e.g. 2026-11-22T10:00:00.000Z'): JsonSchema => ({ type: 'string', format: 'date-time', description });
const nullable = (s: JsonSchema): JsonSchema => ({ ...s, type: [s.type as string, 'null'] });
const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
const obj = (props: Record<string, JsonSchema>, description?: string): JsonSchema => ({
  type: 'object',
  ...(description ? { description } : {}),
  required: Object.keys(props),
  properties: props,
});

export function applicationSchemas(): Record<string, JsonSchema> {
  const application = {
    uid: str("The platform's own id of its customer"),
    name: nullable(str()),
    metadata: { type: 'object', additionalProperties: { type: 'string' }, description: `The platform's labels: at most ${METADATA_LIMITS.keys} string values, ${METADATA_LIMITS.jsonBytes} bytes as JSON` },
    created_at: time(),
    updated_at: time(),
  };
  return {
    Application: obj(application, "An application: one of the platform's customers"),
    ApplicationList: obj({ applications: { type: 'array', items: ref('Application') }, total: int('Number of items in all pages'), limit: int('The page size used (echoes the request)', 1), offset: int('Items skipped (echoes the request)') }),
    ApplicationDeleted: obj({ deleted_at: time(), webhooks_deleted: int('Webhooks of the application deleted with it') }),
    PortalAccess: obj({
      url: { type: 'string', format: 'uri', description: 'The portal page with a single-use link token in its fragment; hand it to the customer' },
      expires_at: time('The link works once, until then (10 minutes)'),
      session_expires_after_days: int('Days the session it opens lasts', 1),
    }),
    PortalAccessRevoked: obj({ revoked_at: time() }),
    PortalSessionCreated: obj({
      session_token: str('Bearer credential of the session (send as Authorization: Bearer); shown only here'),
      expires_at: time(),
      namespace: str(),
      application: obj({ uid: str(), name: nullable(str()) }),
    }),
    PortalSession: obj({ namespace: str(), application: ref('Application'), expires_at: time() }),
  };
}

const APP_404 = ['APPLICATION_NOT_FOUND'];

export const APPLICATION_OPERATIONS: Record<string, OperationDoc> = {
  'applications.createApplication': {
    operationId: 'createApplication',
    summary: "Create an application: one of the platform's customers (extension)",
    description: `\`uid\` is the platform's own customer id (the character rules of resource names). At most ${DEFAULT_LIMITS.applications} applications per namespace by default (409 LIMIT_EXCEEDED).`,
    request: createApplicationSchema,
    response: 'Application',
    conflict: ['APPLICATION_ALREADY_EXISTS', 'LIMIT_EXCEEDED'],
  },
  'applications.listApplications': { operationId: 'listApplications', summary: 'List applications by uid (extension)', request: null, response: 'ApplicationList', paging: true },
  'applications.getApplication': { operationId: 'getApplication', summary: 'Get an application (extension)', request: null, response: 'Application', notFound: APP_404 },
  'applications.patchApplication': {
    operationId: 'patchApplication',
    summary: 'Change the name or metadata of an application (extension)',
    description: 'Given fields replace the stored ones; null clears one.',
    request: patchApplicationSchema,
    response: 'Application',
    notFound: APP_404,
    conflict: ['CONFLICT'],
  },
  'applications.deleteApplication': {
    operationId: 'deleteApplication',
    summary: 'Delete an application and its webhooks (extension)',
    description: 'Its portal links and sessions stop working at once; its webhooks are deleted with it.',
    request: null,
    response: 'ApplicationDeleted',
    notFound: APP_404,
  },
  'applications.createPortalAccess': {
    operationId: 'createPortalAccess',
    summary: 'Create a single-use portal link for an application (extension)',
    description: `The link works once within 10 minutes; its use opens a session of \`session_days\` (default ${SESSION_DAYS.default}, ${SESSION_DAYS.min} to ${SESSION_DAYS.max}) that may manage only this application's webhooks and read the event catalog.`,
    request: portalAccessSchema,
    response: 'PortalAccess',
    notFound: APP_404,
  },
  'applications.revokePortalAccess': {
    operationId: 'revokePortalAccess',
    summary: "End every portal link and session of an application (extension)",
    request: null,
    response: 'PortalAccessRevoked',
    notFound: APP_404,
  },
  'applications.createPortalSession': {
    operationId: 'createPortalSession',
    summary: 'Exchange a portal link for a session (extension)',
    description: 'Called with the link token as the bearer credential (Authorization: Bearer plink.…), once; answers the session credential. An API key gets 403; a used, expired or revoked link 401.',
    request: null,
    response: 'PortalSessionCreated',
  },
  'applications.getPortalSession': {
    operationId: 'getPortalSession',
    summary: 'The portal session making the request: its application and expiry (extension)',
    description: 'Called with a portal session as the bearer credential; an API key gets 403.',
    request: null,
    response: 'PortalSession',
    notFound: APP_404,
  },
};
