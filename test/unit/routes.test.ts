import {
  API_BASE_PATH, apiResources, decodePathParameters, matchResource, resolveRoute, resourcePathOf, routesOf, ROUTES, type Route,
} from '../../lambda/core/rules/routes';

/**
 * Test-local rows, so these cases do not depend on which endpoints exist yet: a greedy publish
 * pair whose suffixes overlap (`/messages` and `/messages/batch`), a literal path, and two methods
 * on one parameterised resource.
 */
const row = (method: Route['method'], path: string, operation: string, group: Route['group'] = 'queues'): Route => ({
  method, path, group, operation, category: 'management', scope: 'read', status: 200,
});
const TEST_ROUTES: Route[] = [
  row('GET', '/namespace', 'getNamespace', 'namespace'),
  row('POST', '/topics/{topic+}/messages', 'publish', 'publish'),
  row('POST', '/topics/{topic+}/messages/batch', 'publishBatch', 'publish'),
  row('GET', '/queues/{queue_name}', 'getQueue'),
  row('DELETE', '/queues/{queue_name}', 'deleteQueue'),
  row('POST', '/queues/{queue_name}/messages/{message_id}/ack', 'ack'),
];

describe('resourcePathOf', () => {
  it('keeps a path without a greedy parameter as it is', () => {
    expect(resourcePathOf('/queues/{queue_name}/messages/consume')).toBe('/queues/{queue_name}/messages/consume');
  });

  it('cuts a path after its greedy parameter, since API Gateway allows it only last', () => {
    expect(resourcePathOf('/topics/{topic+}/messages/batch')).toBe('/topics/{topic+}');
  });
});

describe('apiResources', () => {
  it('lists each resource once with its methods, in route-table order', () => {
    expect([...apiResources(TEST_ROUTES)]).toEqual([
      ['/namespace', ['GET']],
      ['/topics/{topic+}', ['POST']],
      ['/queues/{queue_name}', ['GET', 'DELETE']],
      ['/queues/{queue_name}/messages/{message_id}/ack', ['POST']],
    ]);
  });

  it('serves GET /namespace from the real route table', () => {
    expect(apiResources().get('/namespace')).toEqual(['GET']);
  });

  it('puts every row of the real route table under some resource', () => {
    const resources = apiResources();
    for (const r of ROUTES) expect(resources.get(resourcePathOf(r.path))).toContain(r.method);
  });
});

describe('matchResource', () => {
  it('matches a literal path exactly, with no parameters', () => {
    expect(matchResource('/namespace', '/namespace')).toEqual({});
  });

  it.each([
    ['/namespace', '/namespaces'],
    ['/namespace', '/namespace/x'],
    ['/queues/{queue_name}', '/queues'],
    ['/queues/{queue_name}', '/queues/'],
    ['/queues/{queue_name}', '/queues/a/b'],
    ['/queues/{queue_name}/messages/consume', '/queues/q/messages/ack'],
  ])('does not match %s to %s', (resource, path) => {
    expect(matchResource(resource, path)).toBeUndefined();
  });

  // API Gateway REST proxy integrations hand pathParameters over still percent-encoded
  // (https://github.com/serverless/serverless/issues/5037); the local gateway must too.
  it('captures one level per parameter as sent, still percent-encoded', () => {
    expect(matchResource('/queues/{queue_name}/messages/{message_id}/ack', '/queues/my%20queue/messages/m-1/ack')).toEqual({
      queue_name: 'my%20queue',
      message_id: 'm-1',
    });
  });

  it('captures every remaining level in a greedy parameter, encoded `/` included, without decoding', () => {
    expect(matchResource('/topics/{topic+}', '/topics/a/b%20c/messages')).toEqual({ topic: 'a/b%20c/messages' });
    expect(matchResource('/topics/{topic+}', '/topics/a%2Fb/messages')).toEqual({ topic: 'a%2Fb/messages' });
  });

  it('needs at least one level for a greedy parameter', () => {
    expect(matchResource('/topics/{topic+}', '/topics')).toBeUndefined();
    expect(matchResource('/topics/{topic+}', '/topics/')).toBeUndefined();
  });

  it('leaves a malformed percent escape to the request middleware (a 400 there)', () => {
    expect(matchResource('/queues/{queue_name}', '/queues/%E0%A4%A')).toEqual({ queue_name: '%E0%A4%A' });
  });
});

describe('decodePathParameters', () => {
  it.each([
    ['eu%20west%2Forders', 'eu west/orders'],
    ['a%3Ab', 'a:b'],
    ['a:b', 'a:b'],
    ['100%25', '100%'],
    ['a+b', 'a+b'],
    ['a%2Bb', 'a+b'],
    ['%C3%A9t%C3%A9%2F%E6%97%A5', 'été/日'],
    ['%2525', '%25'],
  ])('decodes %s once to %s', (raw, want) => {
    expect(decodePathParameters({ topic: raw })).toEqual({ params: { topic: want } });
  });

  it('names a parameter that is not valid percent-encoding', () => {
    expect(decodePathParameters({ topic: 'ok', queue_name: '%E0%A4%A' })).toEqual({ invalid: 'queue_name' });
    expect(decodePathParameters({ topic: 'a/%zz' })).toEqual({ invalid: 'topic' });
  });
});

describe('resolveRoute', () => {
  const topic = (method: string, value: string) => resolveRoute(method, '/topics/{topic+}', { topic: value }, TEST_ROUTES);

  it('picks the publish route and strips /messages from the topic', () => {
    expect(topic('POST', 'a/b/messages')).toEqual({ route: TEST_ROUTES[1], params: { topic: 'a/b' } });
  });

  it('picks the batch route for /messages/batch rather than the shorter /messages', () => {
    expect(topic('POST', 'a/b/messages/batch')).toEqual({ route: TEST_ROUTES[2], params: { topic: 'a/b' } });
  });

  it('keeps levels named like the suffix inside the topic', () => {
    expect(topic('POST', 'messages/messages')?.params).toEqual({ topic: 'messages' });
    expect(topic('POST', 'a/messages/batch/messages')).toEqual({ route: TEST_ROUTES[1], params: { topic: 'a/messages/batch' } });
  });

  it.each([['messages'], ['messages/batch'], ['a/b'], ['a/b/messages/other']])('finds no route for the greedy value %s', (value) => {
    expect(topic('POST', value)).toBeUndefined();
  });

  it('finds no route for a method the resource does not serve', () => {
    expect(topic('GET', 'a/messages')).toBeUndefined();
  });

  it('tells methods apart on one literal resource and keeps its parameters', () => {
    expect(resolveRoute('GET', '/queues/{queue_name}', { queue_name: 'q' }, TEST_ROUTES)).toEqual({ route: TEST_ROUTES[3], params: { queue_name: 'q' } });
    expect(resolveRoute('DELETE', '/queues/{queue_name}', { queue_name: 'q' }, TEST_ROUTES)?.route.operation).toBe('deleteQueue');
  });

  it('resolves GET /namespace from the real route table by default', () => {
    expect(resolveRoute('GET', '/namespace', {})?.route).toMatchObject({ group: 'namespace', operation: 'getNamespace', scope: 'read' });
  });
});

describe('routesOf', () => {
  it('returns the rows of one handler group', () => {
    expect(routesOf('publish', TEST_ROUTES).map((r) => r.operation)).toEqual(['publish', 'publishBatch']);
  });
});

describe('the real route table', () => {
  it('has one row per method and path', () => {
    const keys = ROUTES.map((r) => `${r.method} ${r.path}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('answers creates and publishes with 201 and everything else with 200', () => {
    for (const r of ROUTES) expect(r.status).toBe(r.method === 'POST' && /create|publish/i.test(r.operation) ? 201 : 200);
  });

  it('lives under /api/v1', () => {
    expect(API_BASE_PATH).toBe('/api/v1');
  });
});
