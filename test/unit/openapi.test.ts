/**
 * The OpenAPI document against the route table and redocly's recommended lint rules: every route
 * is documented (and nothing else but the document itself), every operation has a row in the
 * operation table, request bodies are the handlers' zod schemas, and the text served to API
 * Gateway parses back to the same document.
 */
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { ROUTES, type Route } from '../../lambda/core/rules/routes';
import { createQueueSchema } from '../../lambda/queues/rules/queues';
import { buildOpenApi, OPENAPI_PATH, openApiJson, openApiPath, templateSafeJson } from '../../lambda/api-docs/openapi';
import { OPERATIONS, operationKey } from '../../lambda/api-docs/operations';
import * as z from 'zod/mini';

const doc = buildOpenApi();
type Op = { operationId: string; responses: Record<string, any>; requestBody?: any; parameters?: any[]; security?: unknown[]; description?: string; 'x-also-required-scope'?: string; 'x-conditionally-required-scopes'?: { scope: string; when: string }[] };
const opAt = (path: string, method: string) => (doc.paths[path] as Record<string, Op>)[method.toLowerCase()];

describe('OpenAPI document', () => {
  it('passes redocly lint with the recommended ruleset, without errors or warnings', async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: JSON.stringify(doc, null, 2), absoluteRef: 'openapi.json', config });
    const shown = problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location?.[0]?.pointer}`);
    expect(shown.filter((p) => p.startsWith('error'))).toEqual([]);
    expect(shown).toEqual([]);
  }, 30_000);

  it.each(ROUTES.map((r) => [r.method, r.path, r]))('documents %s %s with its status, scope and category', (_m, _p, route: Route) => {
    const op = opAt(openApiPath(route.path), route.method);
    expect(op).toBeDefined();
    expect(op.responses[String(route.status)]).toBeDefined();
    expect(op).toMatchObject({ 'x-required-scope': route.scope, 'x-rate-limit-category': route.category });
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['401', '404', '429', '500']));
    if (route.scope !== 'read') expect(op.responses['403']).toBeDefined();
    expect(op['x-also-required-scope']).toBe(route.also);
    expect(op['x-conditionally-required-scopes']).toEqual(route.alsoWhen?.map((c) => ({ ...c })));
    for (const c of route.alsoWhen ?? []) expect(op.description).toContain(`also \`${c.scope}\` when ${c.when}`);
  });

  it('says which webhook writes need consume or publish beside manage, and that replay needs consume', () => {
    const webhookWrite = opAt('/webhooks/{webhook_name}', 'PATCH');
    expect(webhookWrite['x-conditionally-required-scopes']?.map((c) => c.scope)).toEqual(['consume', 'publish']);
    expect(opAt('/webhooks/{webhook_name}/replay', 'POST')).toMatchObject({ 'x-required-scope': 'manage', 'x-also-required-scope': 'consume' });
  });

  it('documents nothing but the route table and the document itself', () => {
    const documented = Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item as object).map((m) => `${m.toUpperCase()} ${path}`));
    const expected = [...ROUTES.map((r) => `${r.method} ${openApiPath(r.path)}`), `GET ${OPENAPI_PATH}`];
    expect(documented.sort()).toEqual(expected.sort());
  });

  it('has one operation-table row per route and no row without a route', () => {
    const keys = ROUTES.map(operationKey);
    expect(keys.filter((k) => !OPERATIONS[k])).toEqual([]);
    expect(Object.keys(OPERATIONS).filter((k) => !keys.includes(k))).toEqual([]);
  });

  it('refuses to build a document for a route without a row', () => {
    const extra: Route = { method: 'POST', path: '/queues/{queue_name}/purge', group: 'queues', operation: 'purgeQueue', category: 'management', scope: 'manage', status: 200 };
    expect(() => buildOpenApi({ routes: [...ROUTES, extra] })).toThrow('lambda/api-docs/operations.ts has no row for POST /queues/{queue_name}/purge (queues.purgeQueue)');
  });

  it('describes request bodies with the zod schemas the handlers parse', () => {
    const op = opAt('/queues', 'POST');
    expect(op.requestBody).toEqual({ required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/CreateQueueRequest' } } } });
    const schema = (doc.components.schemas as Record<string, any>).CreateQueueRequest;
    const { $schema: _s, ...fromZod } = z.toJSONSchema(createQueueSchema, { io: 'input' }) as Record<string, any>;
    expect(schema.required).toEqual(fromZod.required);
    expect(Object.keys(schema.properties)).toEqual(Object.keys(fromZod.properties));
    expect(schema.properties.max_retries).toEqual(fromZod.properties.max_retries);
    // Every field optional: the body may be left out.
    expect(opAt('/queues/{queue_name}/messages/consume', 'POST').requestBody.required).toBe(false);
  });

  it('has PUT take the name from the path and PATCH take any subset of fields, null included', () => {
    const schemas = doc.components.schemas as Record<string, any>;
    expect(schemas.ReplaceWebhookRequest.required).toEqual(['url', 'topic_filter']);
    expect(schemas.PatchWebhookRequest.required).toBeUndefined();
    expect(schemas.PatchWebhookRequest.properties.retry_delay.anyOf).toContainEqual({ type: 'null' });
  });

  it('describes the multi-level topic as one path parameter and takes Idempotency-Key on publishes', () => {
    const op = opAt('/topics/{topic}/messages', 'POST');
    expect(op.parameters).toContainEqual(expect.objectContaining({ name: 'topic', in: 'path', required: true, description: expect.stringContaining('may contain `/`') }));
    expect(op.parameters).toContainEqual({ $ref: '#/components/parameters/Idempotency-Key' });
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['201', '409', '413', '422']));
    expect(op.responses['201'].headers).toHaveProperty('Idempotent-Replayed');
  });

  it('serves itself without authentication', () => {
    expect(opAt(OPENAPI_PATH, 'GET').security).toEqual([]);
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
  });

  it('escapes $ and # for an API Gateway mapping template without changing the parsed document', () => {
    const text = templateSafeJson(openApiJson());
    expect(text).not.toMatch(/[$#]/);
    expect(JSON.parse(text)).toEqual(JSON.parse(openApiJson()));
  });
});
