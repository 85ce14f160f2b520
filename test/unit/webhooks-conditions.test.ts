import { compare, conditionHolds, type Condition } from '../../lambda/domain/conditions';

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
