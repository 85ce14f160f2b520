/**
 * What a webhook request may ask, by who sends it (lambda/webhooks/rules/requests.ts): a portal
 * session's application is forced and its TLS material is PEM text only; the ?application= filter;
 * what re-enables a webhook; the scopes a merged configuration needs.
 */
import { allowedFor, applicationFilter, forcedApplication, patchEnables, putEnables, readerOf } from '../../lambda/webhooks/rules/requests';
import type { WebhookConfig } from '../../lambda/webhooks/rules/webhooks';

const session = { application: 'app-1', scopes: ['manage', 'consume'] };
const key = { scopes: ['manage'] };
const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

describe('webhook requests', () => {
  it.each([
    [session, { name: 'w', application: 'other' }, { name: 'w', application: 'app-1' }], // a session's own application, whatever the body says
    [key, { name: 'w', application: 'other' }, { name: 'w', application: 'other' }], // a key's body unchanged
    [session, ['not', 'an', 'object'], ['not', 'an', 'object']], // refused later by parsing
    [session, { tls: { ca_cert: PEM } }, { tls: { ca_cert: PEM }, application: 'app-1' }],
    [key, { tls: { ca_cert: '/etc/ssl/ca.pem' } }, { tls: { ca_cert: '/etc/ssl/ca.pem' } }], // a file path is the runtime's to judge for a key
  ])('forces a body of %j: %j to %j', (who, body, want) => {
    expect(forcedApplication(who, body)).toEqual(want);
  });

  it('refuses TLS file paths from a portal session, naming each field', () => {
    expect(() => forcedApplication(session, { tls: { ca_cert: PEM, client_cert: 'certs/c.pem', client_key: 'certs/k.pem' } })).toThrow(
      expect.objectContaining({ status: 422, details: { fields: [expect.objectContaining({ field: 'tls.client_cert' }), expect.objectContaining({ field: 'tls.client_key' })] } }),
    );
  });

  it.each([
    [session, 'other', 'app-1'],
    [key, 'app-2', 'app-2'],
    [key, undefined, undefined],
  ])('lists for %j asking %p the application %p', (who, uid, want) => {
    expect(applicationFilter(who, uid)).toBe(want);
  });

  it('refuses an ?application= that is no uid', () => {
    expect(() => applicationFilter(key, 'a b')).toThrow(expect.objectContaining({ status: 422 }));
  });

  it('shows secrets only to keys that may change a webhook', () => {
    expect(readerOf(key)).toEqual({ manage: true });
    expect(readerOf({ scopes: ['consume'] })).toEqual({ manage: false });
  });

  it.each([
    [{ enabled: true }, false, true, true], // PATCH says it; PUT turns it from false to true
    [{ enabled: true }, true, true, false], // a PUT writing back what GET showed does not re-enable
    [{ enabled: false }, false, false, false],
    [{}, false, false, false],
  ])('re-enables on %j (stored enabled %p): PATCH %p, PUT %p', (body, storedEnabled, patch, put) => {
    expect(patchEnables(body)()).toBe(patch);
    expect(putEnables(body)({ enabled: storedEnabled } as WebhookConfig)).toBe(put);
  });

  it('checks the scopes of the configuration as merged', () => {
    const hooked = { config: { on_success: { topic: 'done' } } as unknown as WebhookConfig };
    expect(() => allowedFor(key)(hooked)).toThrow(expect.objectContaining({ status: 403, details: { required_scope: 'publish' } }));
    expect(allowedFor({ scopes: ['manage', 'publish'] })(hooked)).toBe(hooked);
  });
});
