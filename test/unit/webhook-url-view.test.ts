/** Keys without `manage` see a webhook URL as scheme and host only (URLs often carry tokens). */
import { configView, parseWebhook, urlOrigin } from '../../lambda/webhooks/rules/webhooks';

const { config } = parseWebhook({ name: 'w', url: 'https://hooks.example.com:8443/in/abc?token=s3cr3t#frag', topic_filter: 'a/#', headers: { Authorization: 'Bearer x' } });

describe('webhook url in reads', () => {
  it('is whole for manage keys', () => {
    expect(configView(config, { manage: true }).url).toBe('https://hooks.example.com:8443/in/abc?token=s3cr3t#frag');
  });

  it('is scheme and host for other keys, with no path, query or fragment', () => {
    const view = configView(config, { manage: false });
    expect(view.url).toBe('https://hooks.example.com:8443');
    expect(JSON.stringify(view)).not.toContain('s3cr3t');
    expect(JSON.stringify(view)).not.toContain('/in/abc');
  });

  it.each([
    ['https://h.example/x', 'https://h.example'], ['http://h.example:80/x?y=1', 'http://h.example'], ['http://[::1]:9/p', 'http://[::1]:9'], ['not a url', '[redacted]'],
  ])('urlOrigin(%s) = %s', (url, origin) => expect(urlOrigin(url)).toBe(origin));
});
