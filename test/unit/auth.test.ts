import { bearerKey, generateApiKey, hashApiKey, hasScope, NAMESPACE_NAME, namespaceFromHost, requireScopes } from '../../lambda/core/rules/auth';
import { webhookScopes } from '../../lambda/webhooks/rules/webhooks';
import { ApiError } from '../../lambda/core/rules/errors';

describe('bearerKey', () => {
  it.each([
    ['Bearer dev-key', 'dev-key'],
    ['bearer dev-key', 'dev-key'],
    ['BEARER dev-key', 'dev-key'],
    ['Bearer   dev-key', 'dev-key'],
    ['Bearer dev-key  ', 'dev-key'],
  ])('reads the key from %j', (header, key) => {
    expect(bearerKey(header)).toBe(key);
  });

  it.each([[undefined], [''], ['Bearer'], ['Bearer '], ['Basic dev-key'], ['dev-key'], ['Bearer dev key'], ['Bearerdev-key']])(
    'finds no key in %j',
    (header) => {
      expect(bearerKey(header)).toBeUndefined();
    },
  );
});

describe('hasScope', () => {
  it('lets every key read, even one without scopes', () => {
    expect(hasScope([], 'read')).toBe(true);
    expect(hasScope(['publish'], 'read')).toBe(true);
  });

  it('grants a scope the key holds and refuses one it does not', () => {
    expect(hasScope(['publish', 'consume'], 'consume')).toBe(true);
    expect(hasScope(['publish'], 'manage')).toBe(false);
    expect(hasScope(['consume'], 'publish')).toBe(false);
  });

  it('grants every scope to a * key', () => {
    for (const s of ['publish', 'consume', 'manage', 'read'] as const) expect(hasScope(['*'], s)).toBe(true);
  });
});

describe('namespaceFromHost', () => {
  it.each([
    ['acme.localhost:8080', 'acme'],
    ['acme.localhost', 'acme'],
    ['ACME.LocalHost:8080', 'acme'],
  ])('reads the namespace label of %s', (host, ns) => {
    expect(namespaceFromHost(host, 'localhost')).toBe(ns);
  });

  it.each([
    ['127.0.0.1:8080'],
    ['localhost:8080'],
    ['localhost'],
    ['abc123.execute-api.eu-west-1.amazonaws.com'],
    ['a.b.localhost'],
    ['notlocalhost:8080'],
    [undefined],
  ])('names no namespace for the Host %s (ordinary access by the key)', (host) => {
    expect(namespaceFromHost(host, 'localhost')).toBeUndefined();
  });

  it('names no namespace when no base domain is configured', () => {
    expect(namespaceFromHost('acme.localhost', undefined)).toBeUndefined();
  });

  it('compares the base domain case-insensitively', () => {
    expect(namespaceFromHost('acme.api.example.com', 'API.Example.com')).toBe('acme');
  });
});

describe('hashApiKey', () => {
  it('is the hex SHA-256 of the key', () => {
    expect(hashApiKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('hashes the UTF-8 bytes and tells near keys apart', () => {
    expect(hashApiKey('ключ')).toMatch(/^[0-9a-f]{64}$/);
    expect(hashApiKey('dev-key')).not.toBe(hashApiKey('dev-key '));
  });
});

describe('generateApiKey', () => {
  it('makes a fresh key of the namespace each time, of at least 192 random bits', () => {
    const keys = new Set(Array.from({ length: 200 }, () => generateApiKey('acme')));
    expect(keys.size).toBe(200);
    for (const k of keys) expect(k).toMatch(/^acme_[A-Za-z0-9_-]{32}$/);
  });
});

describe('NAMESPACE_NAME', () => {
  it.each([['a'], ['acme'], ['a-b-1'], ['0'], ['x'.repeat(63)]])('accepts %s', (name) => {
    expect(NAMESPACE_NAME.test(name)).toBe(true);
  });

  it.each([[''], ['Acme'], ['-a'], ['a-'], ['a_b'], ['a.b'], ['x'.repeat(64)]])('refuses %j', (name) => {
    expect(NAMESPACE_NAME.test(name)).toBe(false);
  });
});

describe('requireScopes and what a webhook write needs (docs/security.md)', () => {
  const missing = (scopes: string[], required: Parameters<typeof requireScopes>[1]) => {
    try {
      requireScopes(scopes, required);
      return undefined;
    } catch (e) {
      expect(e).toBeInstanceOf(ApiError);
      expect((e as ApiError).status).toBe(403);
      return (e as ApiError).details.required_scope;
    }
  };
  const hook = { topic: 't', payload: 'p' };

  it.each([
    [{ enabled: false }, []],
    [{ enabled: true }, ['consume']],
    [{ enabled: false, on_success: hook }, ['publish']],
    [{ enabled: false, on_failure: 'send_to_dlq' as const }, ['publish']],
    [{ enabled: true, on_failure: hook }, ['consume', 'publish']],
  ])('a webhook left as %j needs %j beside manage', (c, scopes) => {
    expect(webhookScopes(c)).toEqual(scopes);
  });

  it.each([
    [['manage'], ['manage', undefined], undefined],
    [['manage'], ['manage', 'publish'], 'publish'],
    [['publish'], ['manage', 'publish'], 'manage'],
    [['manage', 'publish'], ['manage', 'consume', 'publish'], 'consume'],
    [['*'], ['manage', 'consume', 'publish'], undefined],
    [[], ['read'], undefined],
  ] as const)('a key with %j asked for %j lacks %j', (scopes, required, lacks) => {
    expect(missing([...scopes], [...required])).toBe(lacks);
  });
});
