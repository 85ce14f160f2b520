/** The block extraction of the docs test (test/docs/blocks.ts): which blocks run, which are skipped. */
import { extractBlocks, onPort } from '../docs/blocks';

describe('extractBlocks', () => {
  const page = [
    '# Page',
    '```sh',
    'BASE=http://127.0.0.1:8080/api/v1',
    '```',
    'text',
    '```sh skip-run',
    'npx cdk deploy',
    '```',
    '```ts',
    "console.log('x');",
    '```',
    '```json',
    '{"a":1}',
    '```',
    '```',
    'ready in 4.1 s',
    '```',
    '````md',
    '```sh',
    'not a block of its own',
    '```',
    '````',
  ].join('\n');

  it('finds shell and TypeScript blocks in page order, with their lines, and marks skip-run', () => {
    const blocks = extractBlocks(page);
    expect(blocks.map((b) => [b.kind, b.line, b.skip])).toEqual([
      ['shell', 2, false],
      ['shell', 6, true],
      ['ts', 9, false],
      ['other', 12, false],
      ['other', 15, false],
      ['other', 18, false],
    ]);
    expect(blocks[0].code).toBe('BASE=http://127.0.0.1:8080/api/v1');
  });

  it('refuses a block that is never closed', () => {
    expect(() => extractBlocks('```sh\necho')).toThrow(/line 1: the code block opened here is never closed/);
  });

  it('points the default address at the port the test serves on, and nothing else', () => {
    expect(onPort('curl http://127.0.0.1:8080/api/v1 http://localhost:8080/x http://127.0.0.1:80800 http://example.com:8080', 41234)).toBe(
      'curl http://127.0.0.1:41234/api/v1 http://localhost:41234/x http://127.0.0.1:80800 http://example.com:8080',
    );
  });
});
