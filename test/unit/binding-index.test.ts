/**
 * The cached binding index of publish: rebuilt exactly when the namespace's bindings version
 * changed, so a binding created or deleted before a publish is honoured by it. Storage is replaced
 * by an in-memory stand-in; the real reads are covered by the integration tests.
 */
import type { Binding } from '../../lambda/core/storage/resources';

const store = new Map<string, { version: number; bindings: Binding[] }>();
const calls: string[] = [];

jest.mock('../../lambda/core/storage/resources', () => ({
  bindingsVersion: jest.fn(async (ns: string) => {
    calls.push(`version:${ns}`);
    return store.get(ns)?.version ?? 0;
  }),
  loadBindings: jest.fn(async (ns: string) => {
    calls.push(`load:${ns}`);
    return [...(store.get(ns)?.bindings ?? [])];
  }),
}));

import { bindingIndex, matchBindings } from '../../lambda/publishing/binding-index';

const queue = (name: string, topic_filter: string): Binding => ({ kind: 'QUEUE', name, id: `id-${name}`, topic_filter, settings: {} });

/** Changes a namespace's bindings the way storage does: content and version in one step. */
function setBindings(ns: string, bindings: Binding[]) {
  const version = (store.get(ns)?.version ?? 0) + 1;
  store.set(ns, { version, bindings });
}

const names = (bs: Binding[]) => bs.map((b) => b.name).sort();

beforeEach(() => {
  calls.length = 0;
});

describe('binding index', () => {
  it('matches a topic against every binding of the namespace', async () => {
    setBindings('ns-match', [queue('all', '#'), queue('orders', 'orders/#'), queue('created', 'orders/+/created'), queue('users', 'users/+')]);
    expect(names(await matchBindings('ns-match', 'orders/eu/created'))).toEqual(['all', 'created', 'orders']);
    expect(names(await matchBindings('ns-match', 'orders'))).toEqual(['all', 'orders']);
    expect(names(await matchBindings('ns-match', 'users/a/b'))).toEqual(['all']);
  });

  it('answers no bindings for a namespace without any', async () => {
    expect(await matchBindings('ns-empty', 'a/b')).toEqual([]);
  });

  it('reads only the version while it is unchanged', async () => {
    setBindings('ns-cache', [queue('q', 'a/#')]);
    const first = await bindingIndex('ns-cache');
    calls.length = 0;
    const second = await bindingIndex('ns-cache');
    await matchBindings('ns-cache', 'a/b');
    expect(second).toBe(first);
    expect(calls).toEqual(['version:ns-cache', 'version:ns-cache']);
  });

  it('sees a binding created after the index was cached', async () => {
    setBindings('ns-add', [queue('a', 'a/#')]);
    expect(await matchBindings('ns-add', 'b/x')).toEqual([]);
    setBindings('ns-add', [queue('a', 'a/#'), queue('b', 'b/+')]);
    expect(names(await matchBindings('ns-add', 'b/x'))).toEqual(['b']);
  });

  it('forgets a binding deleted after the index was cached', async () => {
    setBindings('ns-del', [queue('only', 'gone/#')]);
    expect(names(await matchBindings('ns-del', 'gone/x'))).toEqual(['only']);
    setBindings('ns-del', []);
    expect(await matchBindings('ns-del', 'gone/x')).toEqual([]);
  });

  it('reads the version before the bindings, so an index is never tagged newer than its content', async () => {
    setBindings('ns-order', [queue('q', '#')]);
    await bindingIndex('ns-order');
    expect(calls).toEqual(['version:ns-order', 'load:ns-order']);
  });

  it('keeps one index per namespace', async () => {
    setBindings('ns-one', [queue('x', 'x/#')]);
    setBindings('ns-two', [queue('y', 'y/#')]);
    expect(names(await matchBindings('ns-one', 'x/1'))).toEqual(['x']);
    expect(names(await matchBindings('ns-two', 'x/1'))).toEqual([]);
    expect(names(await matchBindings('ns-two', 'y/1'))).toEqual(['y']);
    calls.length = 0;
    await matchBindings('ns-one', 'x/1');
    expect(calls).toEqual(['version:ns-one']);
  });
});
