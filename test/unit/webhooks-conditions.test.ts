import { compare, conditionHolds, decimalValue, MAX_NUMERIC_CHARS, type Condition } from '../../lambda/webhooks/rules/conditions';

const c = (field: string, operator: Condition['operator'], value: number | string): Condition => ({ field, operator, value });

describe('conditionHolds', () => {
  it.each([
    // numbers in the payload
    [c('amount', '>', 100), '{"amount":150}', true],
    [c('amount', '>', 100), '{"amount":100}', false],
    [c('amount', '>=', 100), '{"amount":100}', true],
    [c('amount', '<', 100), '{"amount":99.5}', true],
    [c('amount', '<=', 10), '{"amount":10}', true],
    [c('amount', '<=', 10), '{"amount":11}', false],
    [c('code', '==', 7), '{"code":7}', true],
    [c('code', '==', 7), '{"code":8}', false],
    [c('code', '!=', 7), '{"code":8}', true],
    [c('code', '!=', 7), '{"code":7}', false],
    // nested dot paths
    [c('order.total', '<=', 10), '{"order":{"total":10}}', true],
    [c('order.total', '<=', 10), '{"order":5}', false],
    [c('a.b.c', '==', 'x'), '{"a":{"b":{"c":"x"}}}', true],
    // missing, not JSON, not comparable: never (even with !=)
    [c('status', '!=', 0), '{"x":1}', false],
    [c('amount', '>', 1), 'not json', false],
    [c('amount', '!=', 1), 'not json', false],
    [c('v', '!=', 1), '{"v":null}', false],
    [c('v', '==', 'true'), '{"v":true}', false],
    [c('v', '!=', 1), '{"v":[1]}', false],
    [c('v', '!=', 1), '{"v":{"a":1}}', false],
    [c('toString', '==', 'x'), '{}', false],
    // strings
    [c('region', '==', 'eu'), '{"region":"eu"}', true],
    [c('region', '!=', 'eu'), '{"region":"us"}', true],
    [c('region', '>', 'as'), '{"region":"eu"}', false],
    [c('n', '>', 5), '{"n":"10"}', true],
    [c('n', '==', '10'), '{"n":10}', true],
  ])('%j on %s is %s', (cond, payload, expected) => {
    expect(conditionHolds(cond, payload, {})).toBe(expected);
  });

  it.each([
    [c('properties.amount', '>', 100), { amount: '150' }, true],
    [c('properties.amount', '>', 100), { amount: '50' }, false],
    [c('properties.amount', '==', 100), { amount: '100.0' }, true],
    [c('properties.region', '==', 'eu'), { region: 'eu' }, true],
    [c('properties.region', '!=', 'eu'), { region: 'us' }, true],
    [c('properties.region', '<', 'zz'), { region: 'eu' }, false],
    [c('properties.missing', '!=', 'x'), {}, false],
    [c('properties.code', '==', '007'), { code: '7' }, true],
  ])('%j on properties %j is %s', (cond, props, expected) => {
    expect(conditionHolds(cond, '{}', props as Record<string, string>)).toBe(expected);
  });

  it('holds when there is no condition', () => expect(conditionHolds(undefined, 'anything', {})).toBe(true));
});

describe('compare', () => {
  it('compares numerically when both sides are numeric, as strings otherwise', () => {
    expect(compare('10', '>', '9')).toBe(true);
    expect(compare('b', '==', 'b')).toBe(true);
    expect(compare('b', '>=', 'a')).toBe(false);
  });
});

describe('the cost of judging a condition', () => {
  // A long run of digits followed by a non-digit made the old decimal regex backtrack
  // quadratically: 40,000 digits took seconds, in the publish path.
  const adversarial = (bytes: number) => '9'.repeat(bytes - 12) + 'x';

  it('judges a 256 KiB adversarial payload in milliseconds', () => {
    const payload = JSON.stringify({ n: adversarial(256 * 1024), m: { k: adversarial(1000) } });
    const props = { p: adversarial(16 * 1024) };
    const started = performance.now();
    for (const op of ['==', '!=', '>', '>=', '<', '<='] as const) {
      expect(conditionHolds(c('n', op, 5), payload, props)).toBe(op === '!=');
      expect(conditionHolds(c('properties.p', op, '5'), payload, props)).toBe(op === '!=');
      expect(compare(adversarial(256 * 1024), op, adversarial(256 * 1024))).toBe(op === '==');
    }
    // A guard against the quadratic case, not a timing target (those live in npm run bench): the
    // linear check takes well under 10 ms on a quiet machine, the old regex took minutes here, and
    // the bound leaves room for a machine whose cores are shared by the parallel test runs.
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('treats a numeric string longer than the cap as a string', () => {
    const long = '1'.repeat(MAX_NUMERIC_CHARS + 1);
    expect(compare(long, '>', 5)).toBe(false);
    expect(compare(long, '==', long)).toBe(true);
    expect(compare('1'.repeat(MAX_NUMERIC_CHARS), '>', 5)).toBe(true);
  });

  it.each([
    ['1', 1], ['-1', -1], ['1.', 1], ['.5', 0.5], ['-.5', -0.5], ['1e3', 1000], ['2.5E-1', 0.25], [' 42 ', 42], ['\t7\n', 7],
    ['', undefined], ['.', undefined], ['-', undefined], ['1e', undefined], ['e3', undefined], ['1.2.3', undefined], ['+1', undefined],
    ['0x10', undefined], ['1_000', undefined], ['Infinity', undefined], ['1e999', undefined], ['١', undefined],
  ])('reads %j as the number %s', (text, expected) => {
    expect(decimalValue(text)).toBe(expected);
  });
});
