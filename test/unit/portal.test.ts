/**
 * Portal rules (docs/portal.md, lambda/core/rules/portal.ts): which routes a portal credential may
 * call, told apart from API keys by prefix; the portal origins a namespace may allow and the CSP
 * they make.
 */
import { credentialKind, portalCsp, portalMayCall, portalOnly, portalScopes, portalOriginProblem, portalThemeProblem, withTheme } from '../../lambda/core/rules/portal';
import { storedTheme, themeOf } from '../../console/src/theme-rules';
import { ROUTES } from '../../lambda/core/rules/routes';
import { CONSOLE_CSP } from '../../console/security-headers';

describe('portal credentials', () => {
  it('are told from API keys by prefix; a generated API key never has one', () => {
    expect(credentialKind('plink.abc')).toBe('link');
    expect(credentialKind('psess.abc')).toBe('session');
    expect(credentialKind('acme_3kd9')).toBeUndefined();
    expect(credentialKind('plink_abc')).toBeUndefined();
  });

  it('lets a session call only webhook routes (never PUT), the catalog and its own session; a link only its exchange', () => {
    const allowed = ROUTES.filter((r) => portalMayCall('session', r)).map((r) => `${r.method} ${r.path}`);
    expect(allowed.sort()).toEqual([
      'DELETE /webhooks/{webhook_name}',
      'GET /event-types',
      'GET /event-types/{event_type+}',
      'GET /portal/session',
      'GET /webhooks',
      'GET /webhooks/{webhook_name}',
      'GET /webhooks/{webhook_name}/deliveries',
      'GET /webhooks/{webhook_name}/status',
      'PATCH /webhooks/{webhook_name}',
      'POST /webhooks',
      'POST /webhooks/test',
      'POST /webhooks/{webhook_name}/deliveries/{message_id}/replay',
      'POST /webhooks/{webhook_name}/replay',
      'POST /webhooks/{webhook_name}/secret/rotate',
    ]);
    expect(ROUTES.filter((r) => portalMayCall('link', r)).map((r) => `${r.method} ${r.path}`)).toEqual(['POST /portal/session']);
    // The catalog's routes, whatever their parameter is named.
    expect(portalMayCall('session', { method: 'GET', path: '/event-types/{event_type_name}' })).toBe(true);
    expect(portalMayCall('session', { method: 'POST', path: '/event-types' })).toBe(false);
    expect(ROUTES.filter(portalOnly).map((r) => `${r.method} ${r.path}`)).toEqual(['POST /portal/session', 'GET /portal/session']);
  });

  it.each([
    ['session', ['manage', 'consume']], // its application's webhooks and their deliveries, never publish
    ['link', []], // only its exchange for a session, which needs no scope
  ] as const)('give a %s the scopes %j', (kind, scopes) => {
    expect(portalScopes(kind)).toEqual(scopes);
  });
});

describe('portal origins', () => {
  it.each([
    ['https://app.acme.example', undefined],
    ['https://app.acme.example:8443', undefined],
    ['http://127.0.0.1:5173', undefined],
    ['http://app.acme.example', 'not an https origin'],
    ['https://app.acme.example/path', 'not an https origin'],
    ["https://a.example 'unsafe-inline'", 'not'],
    ['*', 'not an origin'],
  ])('%s', (origin, problem) => {
    const why = portalOriginProblem(origin);
    if (problem === undefined) expect(why).toBeUndefined();
    else expect(why).toContain(problem);
  });

  it("opens frame-ancestors and img-src to the allowed origins only, keeping every other directive", () => {
    expect(portalCsp(CONSOLE_CSP, [])).toBe(CONSOLE_CSP);
    const csp = portalCsp(CONSOLE_CSP, ['https://app.acme.example', "https://x.example 'unsafe-inline'"]);
    expect(csp).toMatch(/frame-ancestors https:\/\/app\.acme\.example(;|$)/);
    expect(csp).toContain("img-src 'self' https://app.acme.example;");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp.replace(/frame-ancestors [^;]+/, '').replace(/img-src [^;]+/, '')).toBe(CONSOLE_CSP.replace(/frame-ancestors [^;]+/, '').replace(/img-src [^;]+/, ''));
  });
});

describe('portal themes (stored per namespace)', () => {
  it('stores a #rgb or #rrggbb brand and an https logo, and refuses anything else', () => {
    expect(portalThemeProblem({ brand: '#c2410c', logo: 'https://app.acme.example/logo.svg' })).toBeUndefined();
    expect(portalThemeProblem({ brand: '#abc' })).toBeUndefined();
    expect(portalThemeProblem({ logo: 'http://127.0.0.1:9000/l.svg' })).toBeUndefined();
    for (const brand of ['red', '#abcd', 'c2410c', '#c2410c;background:red']) expect(portalThemeProblem({ brand })).toMatch(/not a hex colour/);
    for (const logo of ['http://cdn.example/l.svg', 'javascript:alert(1)', 'not a url', `https://x.example/${'a'.repeat(2048)}`]) expect(portalThemeProblem({ logo })).toMatch(/not an https URL/);
  });

  it('puts the theme in a meta element of the head, escaped, and leaves the page alone without one', () => {
    const page = '<html><head><title>t</title></head><body></body></html>';
    const themed = withTheme(page, { brand: '#c2410c', logo: 'https://x.example/a"b<c>.svg' });
    expect(themed).toContain('<meta name="portal-theme" content="{&quot;brand&quot;:&quot;#c2410c&quot;,&quot;logo&quot;:&quot;https://x.example/a\\&quot;b&lt;c&gt;.svg&quot;}"></head>');
    expect(storedTheme(decodeAttribute(/content="([^"]*)"/.exec(themed)![1]))).toEqual({ brand: '#c2410c', logo: 'https://x.example/a"b<c>.svg' });
    expect(withTheme(page, undefined)).toBe(page);
    expect(withTheme(page, {})).toBe(page);
  });

  it("shows each stored field over the link's, and the link's only where nothing is stored", () => {
    const link = new URLSearchParams('brand=%23222222&logo=https://link.example/l.svg');
    expect(themeOf({ brand: '#111111', logo: 'https://stored.example/l.svg' }, link)).toEqual({ brand: '#111111', logo: 'https://stored.example/l.svg' });
    expect(themeOf({ brand: '#111111' }, link)).toEqual({ brand: '#111111', logo: 'https://link.example/l.svg' });
    expect(themeOf({}, link)).toEqual({ brand: '#222222', logo: 'https://link.example/l.svg' });
    expect(themeOf({}, new URLSearchParams('brand=red&logo=javascript:alert(1)'))).toEqual({});
    expect([storedTheme(null), storedTheme('not json'), storedTheme('"text"')]).toEqual([{}, {}, {}]);
  });
});

const decodeAttribute = (s: string) => s.replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
