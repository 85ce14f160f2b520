import { classifyAddress, isPublicAddress, normalizeIPv4Literal, parseV6, webhookUrlProblem } from '../../lambda/webhooks/rules/ssrf';

describe('classifyAddress', () => {
  it.each([
    // IPv4
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['169.254.0.1', 'link-local'],
    ['100.64.0.1', 'cgnat'],
    ['100.127.255.255', 'cgnat'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['192.0.2.10', 'reserved'],
    ['198.51.100.7', 'reserved'],
    ['203.0.113.9', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['192.0.0.8', 'reserved'],
    // IPv4 literals in other spellings
    ['2130706433', 'loopback'],
    ['0x7f000001', 'loopback'],
    ['0x7F.0.0.1', 'loopback'],
    ['0177.0.0.1', 'loopback'],
    ['127.1', 'loopback'],
    ['2852039166', 'link-local'], // 169.254.169.254
    ['0xa9fea9fe', 'link-local'],
    ['012.0.0.1', 'private'], // octal 10
    // IPv6
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['fc00::1', 'private'],
    ['fd12:3456:789a::1', 'private'],
    ['fec0::1', 'private'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'reserved'],
    ['100::1', 'reserved'],
    ['2001::1', 'reserved'],
    ['::2', 'reserved'],
    ['4000::1', 'reserved'],
    // IPv4 inside IPv6
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['::ffff:10.1.2.3', 'private'],
    ['::ffff:8.8.8.8', 'public'],
    ['64:ff9b::a9fe:a9fe', 'link-local'],
    ['64:ff9b::8.8.8.8', 'public'],
    ['2002:7f00:1::', 'loopback'],
    ['2002:0808:0808::1', 'public'],
    // Public
    ['8.8.8.8', 'public'],
    ['93.184.216.34', 'public'],
    ['1.1.1.1', 'public'],
    ['172.32.0.1', 'public'],
    ['100.128.0.1', 'public'],
    ['2606:4700:4700::1111', 'public'],
    ['2a00:1450:4001:81c::200e', 'public'],
  ])('%s is %s', (address, cls) => {
    expect(classifyAddress(address)).toBe(cls);
    expect(isPublicAddress(address)).toBe(cls === 'public');
  });

  it.each(['example.com', 'localhost', '1.2.3.4.5', '256.1.1.1', '::ffff:1.2.3', 'gggg::1', ''])('%s is not an IP literal', (host) => {
    expect(classifyAddress(host)).toBeUndefined();
  });
});

describe('normalizeIPv4Literal', () => {
  it.each([
    ['2130706433', '127.0.0.1'],
    ['0x7f000001', '127.0.0.1'],
    ['127.1', '127.0.0.1'],
    ['10.1', '10.0.0.1'],
    ['192.168.257', '192.168.1.1'],
    ['0', '0.0.0.0'],
    ['4294967295', '255.255.255.255'],
  ])('%s is %s', (lit, quad) => expect(normalizeIPv4Literal(lit)).toBe(quad));

  it.each(['4294967296', '1.2.3.256', '08.0.0.1', '0x', 'a.b.c.d', '1..2'])('%s is not an IPv4 literal', (lit) => {
    expect(normalizeIPv4Literal(lit === '0x' ? '0xg' : lit)).toBeUndefined();
  });
});

describe('parseV6', () => {
  it('expands :: and a trailing dotted quad', () => {
    expect(parseV6('::ffff:1.2.3.4')).toBe(0xffff01020304n);
    expect(parseV6('1::')).toBe(1n << 112n);
    expect(parseV6('1:2:3:4:5:6:7:8')).toBe(0x00010002000300040005000600070008n);
  });
});

describe('webhookUrlProblem', () => {
  it.each(['https://hooks.example.com/x', 'http://127.0.0.1:8080/hook', 'http://[::1]/x'])('accepts %s', (u) => {
    expect(webhookUrlProblem(u)).toBeUndefined();
  });
  it.each([
    ['ftp://127.0.0.1/x', 'http or https'],
    ['file:///etc/passwd', 'http or https'],
    ['gopher://127.0.0.1/x', 'http or https'],
    ['not a url', 'absolute'],
    ['/relative', 'absolute'],
    ['https://user:pw@example.com/', 'credentials'],
  ])('refuses %s', (u, why) => expect(webhookUrlProblem(u)).toContain(why));
});
