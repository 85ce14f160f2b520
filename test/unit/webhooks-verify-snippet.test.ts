/**
 * The signature check docs/webhooks.md ("Verifying signatures") gives users, run as the page
 * prints it against requests built by the code that builds every delivery's request
 * (buildRequest: Standard Webhooks headers, gzip, a rotated secret's second signature). The docs
 * test runs the block too, but only defines the function there; this test calls it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import ts from 'typescript';
import { buildRequest, type BuiltRequest } from '../../lambda/webhooks/rules/delivery';
import type { PublishedMessage } from '../../lambda/core/rules/message';
import { newSecret } from '../../lambda/webhooks/rules/signatures';
import { parseWebhook } from '../../lambda/webhooks/rules/webhooks';
import { extractBlocks } from '../docs/blocks';

type Verify = (secret: string, headers: Record<string, string | undefined>, rawBody: Buffer, toleranceSeconds?: number) => boolean;

/** The page's block under "## Verifying signatures", compiled to CommonJS and evaluated. */
function snippet(): Verify {
  const page = readFileSync(join(__dirname, '../../docs/webhooks.md'), 'utf8');
  const section = page.slice(page.indexOf('## Verifying signatures'));
  const [block] = extractBlocks(section);
  expect(block.kind).toBe('ts');
  expect(block.skip).toBe(false);
  const js = ts.transpileModule(block.code, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 } }).outputText;
  return new Function('require', 'exports', `${js}\nreturn verifyWebhook;`)(require, {}) as Verify;
}

const message: PublishedMessage = {
  message_id: '01JDSNIPPET', topic: 'orders/eu', payload: '{"amount":150}', content_type: 'application/json', properties: {}, published_at: Date.now(), size: 14,
};
const config = (extra: Record<string, unknown> = {}) => parseWebhook({ name: 'w', url: 'https://x.example/h', topic_filter: 'orders/#', ...extra }).config;
const built = (r: ReturnType<typeof buildRequest>): BuiltRequest => {
  if ('tooLarge' in r) throw new Error('built no request');
  return r;
};

describe('the signature check of docs/webhooks.md', () => {
  let verify: Verify;
  beforeAll(() => {
    verify = snippet();
  });
  const secret = newSecret();

  it('accepts a delivery signed with the secret, and refuses another body, secret or an old timestamp', () => {
    const r = built(buildRequest(config(), secret, message, Date.now()));
    expect(verify(secret, r.headers, r.body)).toBe(true);
    expect(verify(secret, r.headers, Buffer.from('{"amount":151}'))).toBe(false);
    expect(verify(newSecret(), r.headers, r.body)).toBe(false);
    const old = built(buildRequest(config(), secret, message, Date.now() - 301_000));
    expect(verify(secret, old.headers, old.body)).toBe(false);
    expect(verify(secret, { ...r.headers, 'webhook-signature': undefined }, r.body)).toBe(false);
  });

  it('verifies a gzipped delivery over the bytes after gunzip', () => {
    const r = built(buildRequest(config({ compression: 'gzip' }), secret, message, Date.now()));
    expect(verify(secret, r.headers, gunzipSync(r.body))).toBe(true);
    expect(verify(secret, r.headers, r.body)).toBe(false);
  });

  it('accepts either secret while a rotated one is in its grace period', () => {
    const next = newSecret();
    const r = built(buildRequest(config(), next, message, Date.now(), [secret]));
    expect(verify(next, r.headers, r.body)).toBe(true);
    expect(verify(secret, r.headers, r.body)).toBe(true);
  });
});
