/**
 * The retry workflow diagram of docs/architecture.md is generated from the ASL file
 * (bin/diagrams.ts): the page must hold exactly what the generator makes from the current file.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { aslToMermaid, ruleText } from '../../bin/asl-diagram';
import { DIAGRAM_PAGE, generatedBlocks, withBlocks } from '../../bin/diagrams';

const README = join(__dirname, '../..', DIAGRAM_PAGE);

describe('generated diagrams', () => {
  it('docs/architecture.md holds the diagram the ASL file gives (run npm run diagrams after changing it)', () => {
    const readme = readFileSync(README, 'utf8');
    expect(withBlocks(readme, generatedBlocks())).toBe(readme);
  });

  it('draws every state, the start, each Choice rule, defaults, Next, End and retries', () => {
    const source = aslToMermaid({
      StartAt: 'Check',
      States: {
        Check: { Type: 'Choice', Choices: [{ Variable: '$.n', NumericGreaterThan: 0, Next: 'Work' }], Default: 'Done' },
        Work: { Type: 'Task', Parameters: { action: 'work' }, Retry: [{ ErrorEquals: ['States.ALL'], MaxAttempts: 2 }], Next: 'Check' },
        Done: { Type: 'Succeed' },
      },
    });
    expect(source.split('\n')).toEqual([
      'stateDiagram-v2',
      '    state "Check (Choice)" as Check',
      '    state "Work (Task: work)" as Work',
      '    state "Done (Succeed)" as Done',
      '    [*] --> Check',
      '    Check --> Work: n > 0',
      '    Check --> Done: otherwise',
      '    Work --> Check',
      '    Done --> [*]',
      '    note right of Work : retried on any error up to 2 times',
      '',
    ]);
  });

  it('writes And, Or and Not rules as words', () => {
    expect(ruleText({ Or: [{ Variable: '$.a', StringEquals: 'x' }, { And: [{ Variable: '$.b', NumericLessThanEquals: 3 }, { Not: { Variable: '$.c', BooleanEquals: true } }] }] })).toBe(
      'a = x or b <= 3 and not (c = true)',
    );
  });

  it('refuses a page without the markers rather than dropping the diagram', () => {
    expect(() => withBlocks('# no markers', generatedBlocks())).toThrow('no <!-- diagram:webhook-retry:start -->');
  });
});
