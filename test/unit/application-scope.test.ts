/**
 * The two rules a webhook of an application holds to (lambda/webhooks/application-scope.ts):
 * a portal session owns only its application's webhooks, and such a webhook carries only messages
 * addressed to its application.
 */
import { misaddressed, ownedWebhook, reachesWebhook } from '../../lambda/webhooks/application-scope';

const to = (application?: string): { properties: Record<string, string> } => ({ properties: application === undefined ? {} : { 'x-application': application } });

describe('a webhook of an application', () => {
  it('carries only messages addressed to it; one of none carries every message', () => {
    expect([reachesWebhook(to('a'), 'a'), reachesWebhook(to('b'), 'a'), reachesWebhook(to(), 'a')]).toEqual([true, false, false]);
    expect([reachesWebhook(to('a'), undefined), reachesWebhook(to(), undefined)]).toEqual([true, true]);
    expect(misaddressed(to('a'), 'a')).toBeUndefined();
    expect(misaddressed(to('b'), 'a')).toBe('message addressed to another application, webhook of application a: not sent');
    expect(misaddressed(to(), 'a')).toBe('message addressed to no application, webhook of application a: not sent');
  });

  it("is a portal session's only when it is the session's application's; otherwise 404 as if it did not exist", () => {
    const w = { config: { application: 'a' } };
    expect(ownedWebhook(w, 'h', 'a')).toBe(w);
    expect(ownedWebhook(w, 'h', undefined)).toBe(w);
    for (const [hook, owner] of [[w, 'b'], [{ config: {} }, 'a'], [undefined, 'a'], [undefined, undefined]] as const) {
      expect(() => ownedWebhook(hook, 'h', owner)).toThrow(expect.objectContaining({ status: 404, code: 'WEBHOOK_NOT_FOUND' }));
    }
  });
});
