/**
 * The route table: one row per endpoint. It is the single source of truth for the CDK API
 * (lib/constructs/api.ts builds its resources and methods from it), the local gateway
 * (local/gateway.ts matches requests against it), scope checks (middleware/authorize.ts) and rate
 * categories (middleware/rate-limit.ts). A capability adds its rows here and nothing else.
 *
 * Paths are relative to the API root `/api/v1`. `{name}` matches one path level; `{name+}` matches
 * one or more levels (a topic name with `/`). API Gateway only allows a greedy parameter as the
 * last level of a resource, so `/topics/{topic+}/messages` is served by the resource
 * `/topics/{topic+}` and the rest of the path is matched by {@link resolveRoute} in the handler.
 */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
/** Lambda functions that serve HTTP routes; one per endpoint group (DESIGN.md section 1). */
export type HandlerGroup = 'namespace' | 'publish' | 'queues' | 'streams' | 'subscriptions' | 'webhooks' | 'schedules' | 'catalog' | 'applications';
/** Rate-limit categories of SPEC.md "Limits" (DESIGN.md section 10). */
export type RateCategory = 'publish' | 'consume' | 'management';
/** `read` is granted to every valid key of the namespace (DESIGN.md section 2). */
export type Scope = 'read' | 'publish' | 'consume' | 'manage';

export interface Route {
  method: HttpMethod;
  path: string;
  group: HandlerGroup;
  /** Name of the operation inside the group's handler module. */
  operation: string;
  category: RateCategory;
  scope: Scope;
  /**
   * A second scope the key must hold as well: what publishes later on the key's behalf (a
   * schedule, a redrive) needs `publish` beside `manage` (DESIGN.md section 2), so a key refused
   * a publish cannot make one happen another way; a webhook replay sends stored payloads to the
   * webhook's URL, so it needs `consume`.
   */
  also?: Scope;
  /**
   * Scopes needed beside these when the request's body asks for what they allow, checked by the
   * operation (it knows the body); listed here so the API document says them. A webhook that
   * delivers reads payloads (`consume`); its hooks publish (`publish`): domain/webhooks.ts
   * `webhookScopes`.
   */
  alsoWhen?: readonly { scope: Scope; when: string }[];
  /** Status of a successful answer (201 for creates and publishes, DESIGN.md section 3). */
  status: 200 | 201;
}

/** What a webhook create, PUT or PATCH needs beside `manage`, by what it leaves (docs/security.md). */
/** What a replay needs beside `manage` and `consume`: the delivery's end runs the webhook's hooks. */
const REPLAY_SCOPES = [{ scope: 'publish', when: 'the webhook has a hook (on_success, on_failure): the replayed delivery runs it, publishing on the key\'s behalf' }] as const;

const WEBHOOK_WRITE_SCOPES = [
  { scope: 'consume', when: 'the webhook is left enabled: it sends every payload its filter matches to its URL' },
  { scope: 'publish', when: 'the webhook is left with a hook (on_success, on_failure): hooks publish on the key\'s behalf' },
] as const;

export const ROUTES: readonly Route[] = [
  { method: 'GET', path: '/namespace', group: 'namespace', operation: 'getNamespace', category: 'management', scope: 'read', status: 200 },
  // Extension for the console (docs/console.md): the key's scopes and the rate-limit headroom.
  { method: 'GET', path: '/namespace/access', group: 'namespace', operation: 'getAccess', category: 'management', scope: 'read', status: 200 },

  { method: 'POST', path: '/topics/{topic+}/messages', group: 'publish', operation: 'publish', category: 'publish', scope: 'publish', status: 201 },
  { method: 'POST', path: '/topics/{topic+}/messages/batch', group: 'publish', operation: 'publishBatch', category: 'publish', scope: 'publish', status: 201 },
  // Extension (docs/schedules.md): cancel a message held for a delay beyond 900 s.
  { method: 'DELETE', path: '/messages/{message_id}/delivery', group: 'publish', operation: 'cancelDelivery', category: 'publish', scope: 'publish', status: 200 },

  { method: 'POST', path: '/queues', group: 'queues', operation: 'createQueue', category: 'management', scope: 'manage', alsoWhen: [{ scope: 'publish', when: 'the queue has a dead_letter_topic: dead-lettering publishes to it on the key\'s behalf' }], status: 201 },
  { method: 'GET', path: '/queues', group: 'queues', operation: 'listQueues', category: 'management', scope: 'read', status: 200 },
  { method: 'GET', path: '/queues/{queue_name}', group: 'queues', operation: 'getQueue', category: 'management', scope: 'read', status: 200 },
  { method: 'DELETE', path: '/queues/{queue_name}', group: 'queues', operation: 'deleteQueue', category: 'management', scope: 'manage', status: 200 },
  { method: 'POST', path: '/queues/{queue_name}/messages/consume', group: 'queues', operation: 'consume', category: 'consume', scope: 'consume', status: 200 },
  { method: 'POST', path: '/queues/{queue_name}/messages/ack', group: 'queues', operation: 'ackBatch', category: 'consume', scope: 'consume', status: 200 },
  { method: 'GET', path: '/queues/{queue_name}/stats', group: 'queues', operation: 'queueStats', category: 'management', scope: 'read', status: 200 },
  { method: 'POST', path: '/queues/{queue_name}/redrive', group: 'queues', operation: 'redriveQueue', category: 'management', scope: 'manage', also: 'publish', status: 200 },
  { method: 'POST', path: '/queues/{queue_name}/messages/{message_id}/ack', group: 'queues', operation: 'ack', category: 'consume', scope: 'consume', status: 200 },

  { method: 'POST', path: '/streams', group: 'streams', operation: 'createStream', category: 'management', scope: 'manage', status: 201 },
  { method: 'GET', path: '/streams', group: 'streams', operation: 'listStreams', category: 'management', scope: 'read', status: 200 },
  { method: 'GET', path: '/streams/{stream_name}', group: 'streams', operation: 'getStream', category: 'management', scope: 'read', status: 200 },
  { method: 'DELETE', path: '/streams/{stream_name}', group: 'streams', operation: 'deleteStream', category: 'management', scope: 'manage', status: 200 },
  { method: 'POST', path: '/streams/{stream_name}/messages/consume', group: 'streams', operation: 'consume', category: 'consume', scope: 'consume', status: 200 },
  { method: 'POST', path: '/streams/{stream_name}/offsets/commit', group: 'streams', operation: 'commitOffset', category: 'consume', scope: 'consume', status: 200 },
  { method: 'GET', path: '/streams/{stream_name}/groups', group: 'streams', operation: 'listGroups', category: 'management', scope: 'read', status: 200 },

  { method: 'POST', path: '/subscriptions', group: 'subscriptions', operation: 'createSubscription', category: 'management', scope: 'manage', status: 201 },
  { method: 'GET', path: '/subscriptions', group: 'subscriptions', operation: 'listSubscriptions', category: 'management', scope: 'read', status: 200 },
  { method: 'GET', path: '/subscriptions/{subscription_name}', group: 'subscriptions', operation: 'getSubscription', category: 'management', scope: 'read', status: 200 },
  { method: 'DELETE', path: '/subscriptions/{subscription_name}', group: 'subscriptions', operation: 'deleteSubscription', category: 'management', scope: 'manage', status: 200 },
  { method: 'POST', path: '/subscriptions/{subscription_name}/messages/consume', group: 'subscriptions', operation: 'consume', category: 'consume', scope: 'consume', status: 200 },
  { method: 'GET', path: '/subscriptions/{subscription_name}/subscribers', group: 'subscriptions', operation: 'listSubscribers', category: 'management', scope: 'read', status: 200 },

  { method: 'POST', path: '/webhooks', group: 'webhooks', operation: 'createWebhook', category: 'management', scope: 'manage', alsoWhen: WEBHOOK_WRITE_SCOPES, status: 201 },
  { method: 'GET', path: '/webhooks', group: 'webhooks', operation: 'listWebhooks', category: 'management', scope: 'read', status: 200 },
  // Static `/webhooks/test` wins over `/webhooks/{webhook_name}` (API Gateway prefers static levels).
  { method: 'POST', path: '/webhooks/test', group: 'webhooks', operation: 'testWebhook', category: 'management', scope: 'manage', status: 200 },
  { method: 'GET', path: '/webhooks/{webhook_name}', group: 'webhooks', operation: 'getWebhook', category: 'management', scope: 'read', status: 200 },
  { method: 'PUT', path: '/webhooks/{webhook_name}', group: 'webhooks', operation: 'replaceWebhook', category: 'management', scope: 'manage', alsoWhen: WEBHOOK_WRITE_SCOPES, status: 200 },
  { method: 'PATCH', path: '/webhooks/{webhook_name}', group: 'webhooks', operation: 'patchWebhook', category: 'management', scope: 'manage', alsoWhen: WEBHOOK_WRITE_SCOPES, status: 200 },
  { method: 'DELETE', path: '/webhooks/{webhook_name}', group: 'webhooks', operation: 'deleteWebhook', category: 'management', scope: 'manage', status: 200 },
  { method: 'GET', path: '/webhooks/{webhook_name}/status', group: 'webhooks', operation: 'webhookStatus', category: 'management', scope: 'read', status: 200 },
  // Extensions: the delivery log, replay and secret rotation (docs/webhooks.md).
  { method: 'GET', path: '/webhooks/{webhook_name}/deliveries', group: 'webhooks', operation: 'listDeliveries', category: 'management', scope: 'read', status: 200 },
  { method: 'POST', path: '/webhooks/{webhook_name}/deliveries/{message_id}/replay', group: 'webhooks', operation: 'replayDelivery', category: 'management', scope: 'manage', also: 'consume', alsoWhen: REPLAY_SCOPES, status: 200 },
  { method: 'POST', path: '/webhooks/{webhook_name}/replay', group: 'webhooks', operation: 'replayFailed', category: 'management', scope: 'manage', also: 'consume', alsoWhen: REPLAY_SCOPES, status: 200 },
  { method: 'POST', path: '/webhooks/{webhook_name}/secret/rotate', group: 'webhooks', operation: 'rotateSecret', category: 'management', scope: 'manage', status: 200 },

  // Extension (docs/schedules.md): publish on a cron or every N seconds.
  { method: 'POST', path: '/schedules', group: 'schedules', operation: 'createSchedule', category: 'management', scope: 'manage', also: 'publish', status: 201 },
  { method: 'GET', path: '/schedules', group: 'schedules', operation: 'listSchedules', category: 'management', scope: 'read', status: 200 },
  { method: 'GET', path: '/schedules/{schedule_name}', group: 'schedules', operation: 'getSchedule', category: 'management', scope: 'read', status: 200 },
  { method: 'PUT', path: '/schedules/{schedule_name}', group: 'schedules', operation: 'replaceSchedule', category: 'management', scope: 'manage', also: 'publish', status: 200 },
  { method: 'PATCH', path: '/schedules/{schedule_name}', group: 'schedules', operation: 'patchSchedule', category: 'management', scope: 'manage', also: 'publish', status: 200 },
  { method: 'DELETE', path: '/schedules/{schedule_name}', group: 'schedules', operation: 'deleteSchedule', category: 'management', scope: 'manage', status: 200 },

  // Extension (docs/catalog.md): the event catalog and its AsyncAPI document. An event
  // type's name is a topic or filter: greedy, like /topics/{topic+}, so `orders%2Fcreated` and
  // `orders/created` name the same one whether or not a gateway decodes %2F before matching
  // (API Gateway is reported to: https://github.com/ccbrown/cloud-snitch/pull/13).
  { method: 'POST', path: '/event-types', group: 'catalog', operation: 'createEventType', category: 'management', scope: 'manage', status: 201 },
  { method: 'GET', path: '/event-types', group: 'catalog', operation: 'listEventTypes', category: 'management', scope: 'read', status: 200 },
  { method: 'GET', path: '/event-types/{event_type+}', group: 'catalog', operation: 'getEventType', category: 'management', scope: 'read', status: 200 },
  { method: 'PATCH', path: '/event-types/{event_type+}', group: 'catalog', operation: 'patchEventType', category: 'management', scope: 'manage', status: 200 },
  { method: 'DELETE', path: '/event-types/{event_type+}', group: 'catalog', operation: 'deleteEventType', category: 'management', scope: 'manage', status: 200 },
  { method: 'GET', path: '/asyncapi.json', group: 'catalog', operation: 'asyncApi', category: 'management', scope: 'read', status: 200 },
  // Extension (docs/portal.md): applications (a platform's customers) and portal access.
  { method: 'POST', path: '/applications', group: 'applications', operation: 'createApplication', category: 'management', scope: 'manage', status: 201 },
  { method: 'GET', path: '/applications', group: 'applications', operation: 'listApplications', category: 'management', scope: 'read', status: 200 },
  { method: 'GET', path: '/applications/{uid}', group: 'applications', operation: 'getApplication', category: 'management', scope: 'read', status: 200 },
  { method: 'PATCH', path: '/applications/{uid}', group: 'applications', operation: 'patchApplication', category: 'management', scope: 'manage', status: 200 },
  { method: 'DELETE', path: '/applications/{uid}', group: 'applications', operation: 'deleteApplication', category: 'management', scope: 'manage', status: 200 },
  // A link opens a session judged as manage and consume (lambda/handlers/authorizer.ts): it creates
  // enabled webhooks on any filter of the namespace, so issuing one needs consume as well.
  { method: 'POST', path: '/applications/{uid}/portal-access', group: 'applications', operation: 'createPortalAccess', category: 'management', scope: 'manage', also: 'consume', status: 201 },
  { method: 'DELETE', path: '/applications/{uid}/portal-access', group: 'applications', operation: 'revokePortalAccess', category: 'management', scope: 'manage', status: 200 },
  // Called with a portal link (POST) or session (GET) as the bearer credential, never an API key
  // (middleware/authorize.ts; lambda/core/rules/portal.ts lists what a session may call).
  { method: 'POST', path: '/portal/session', group: 'applications', operation: 'createPortalSession', category: 'management', scope: 'read', status: 201 },
  { method: 'GET', path: '/portal/session', group: 'applications', operation: 'getPortalSession', category: 'management', scope: 'read', status: 200 },
];

/**
 * The portal page (docs/portal.md): the console's index.html in portal mode, with the CSP
 * `frame-ancestors` of the namespace its link names (`?ns=`). No route of the table: it is HTML,
 * not the envelope, and needs no key (the page holds no data). The stack serves it by the
 * portalPage function without the authorizer (lib/constructs/api.ts), CloudFront's `/portal/`
 * forwards to it (lib/constructs/console.ts), and the local gateway serves both paths with the
 * same handler (local/portal-static.ts).
 */
export const PORTAL_PAGE_PATH = '/portal-page';

/** The API root under which every route lives, as API Gateway sees it: stage `api`, resource `/v1`. */
export const API_STAGE = 'api';
export const API_VERSION_PREFIX = '/v1';
export const API_BASE_PATH = `/${API_STAGE}${API_VERSION_PREFIX}`;

/** The API Gateway resource path that serves a route: the path cut after its greedy parameter. */
export function resourcePathOf(path: string): string {
  const levels = path.split('/');
  const greedy = levels.findIndex((l) => /^\{[^}]+\+\}$/.test(l));
  return greedy === -1 ? path : levels.slice(0, greedy + 1).join('/');
}

/** Every distinct API Gateway resource with the methods it serves, in route-table order. */
export function apiResources(routes: readonly Route[] = ROUTES): Map<string, HttpMethod[]> {
  const out = new Map<string, HttpMethod[]>();
  for (const r of routes) {
    const res = resourcePathOf(r.path);
    const methods = out.get(res) ?? [];
    if (!methods.includes(r.method)) methods.push(r.method);
    out.set(res, methods);
  }
  return out;
}

const paramName = (level: string) => level.replace(/^\{|\+?\}$/g, '');
const isParam = (level: string) => level.startsWith('{') && level.endsWith('}');
const isGreedy = (level: string) => level.endsWith('+}');

/**
 * Matches a request path (still percent-encoded) against an API Gateway resource path and returns
 * the path parameters as API Gateway REST proxy integrations hand them to the function: still
 * percent-encoded (REST APIs and Function URLs keep the path encoded, HTTP APIs decode it;
 * publicly reported in https://github.com/serverless/serverless/issues/5037, `%40` for `@`).
 * They are decoded exactly once, by {@link decodePathParameters} in the request middleware.
 * @example matchResource('/topics/{topic+}', '/topics/a/b%20c') // { topic: 'a/b%20c' }
 */
export function matchResource(resource: string, path: string): Record<string, string> | undefined {
  const want = resource.split('/');
  const got = path.split('/');
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i];
    if (isParam(w) && isGreedy(w)) {
      const rest = got.slice(i);
      if (rest.length === 0 || rest.every((l) => l === '')) return undefined;
      params[paramName(w)] = rest.join('/');
      return params;
    }
    const g = got[i];
    if (g === undefined) return undefined;
    if (isParam(w)) {
      if (!g) return undefined;
      params[paramName(w)] = g;
    } else if (w !== g) {
      return undefined;
    }
  }
  return got.length === want.length ? params : undefined;
}

/**
 * Decodes path parameters as API Gateway delivered them (percent-encoded), once: `eu%20west` is
 * `eu west`, `a%2Fb` is `a/b`, `%25` is `%`, `+` stays `+` (a path is not a form). Returns the
 * name of the first parameter that is not valid percent-encoding instead, for a 400.
 */
export function decodePathParameters(params: Record<string, string>): { params: Record<string, string> } | { invalid: string } {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(params)) {
    try {
      out[name] = decodeURIComponent(value);
    } catch {
      return { invalid: name };
    }
  }
  return { params: out };
}

export interface ResolvedRoute {
  route: Route;
  params: Record<string, string>;
}

/**
 * Finds the route of a request that API Gateway (or the local gateway) delivered for `resource`
 * with `params` (still percent-encoded, so an encoded `/` in a topic cannot pass for a route level). For a greedy resource the part of the path after the greedy parameter picks the
 * route: `{topic: 'a/b/messages/batch'}` on `/topics/{topic+}` is the batch publish of `a/b`.
 */
export function resolveRoute(
  method: string,
  resource: string,
  params: Record<string, string>,
  routes: readonly Route[] = ROUTES,
): ResolvedRoute | undefined {
  const candidates = routes.filter((r) => r.method === method && resourcePathOf(r.path) === resource);
  // Longest suffix first, so `/messages/batch` wins over `/messages`.
  candidates.sort((a, b) => b.path.length - a.path.length);
  for (const route of candidates) {
    if (route.path === resource) return { route, params };
    const greedyLevel = resource.split('/').pop() as string;
    const name = paramName(greedyLevel);
    const suffix = route.path.slice(resource.length); // e.g. "/messages/batch"
    const value = params[name] ?? '';
    if (value.endsWith(suffix) && value.length > suffix.length) {
      return { route, params: { ...params, [name]: value.slice(0, value.length - suffix.length) } };
    }
  }
  return undefined;
}

/** Routes served by one handler group. */
export const routesOf = (group: HandlerGroup, routes: readonly Route[] = ROUTES) => routes.filter((r) => r.group === group);

/** Every handler group that serves at least one route (one Lambda function each). */
export const handlerGroups = (routes: readonly Route[] = ROUTES): HandlerGroup[] => [...new Set(routes.map((r) => r.group))];
