/**
 * String formats (ajv-formats) in enforced schemas (docs/catalog.md, "Formats"): every format is
 * checked in time about linear in the string, and each check is charged its string's length to
 * the publish's pattern budget.
 */
import { fullFormats } from 'ajv-formats/dist/formats';
import { cacheValidator, newPatternBudget, payloadViolation } from '../../lambda/catalog/validators';
import { PATTERN_BUDGET } from '../../lambda/catalog/rules/pattern-cost';

const STRING_FORMATS = Object.entries(fullFormats)
  .filter(([, f]) => !(typeof f === 'object' && f !== null && !(f instanceof RegExp) && 'type' in f && f.type === 'number'))
  .map(([name]) => name);

/** Runs of what the formats' expressions can take many ways (separators, digits, letters), after plausible starts. */
const PREFIXES = ['', 'http://', 'a:', 'a://', '1', 'PT', '#', '/', 'a@', '2020-01-01T', '{'];
const UNITS = [':', 'a', '0', '.', '-', 'a-', 'a.', '%', '/', '@', '::', '~0', '1:', ' ', '{a', '\u00e9-'];

const validatorOf = (format: string) => cacheValidator(`formats\0${format}`, { type: 'string', format });

describe('string formats on adversarial strings of 50,000 characters', () => {
  it.each(STRING_FORMATS)('%s answers every one in about linear time', (format) => {
    const validate = validatorOf(format);
    // A linear check of 50,000 characters takes about a millisecond on the loaded test machine;
    // ajv-formats' url regex took seconds on "http://" and a run of ':'. The bound leaves a
    // loaded machine a thousand times the linear time, and no quadratic check passes it.
    let slowest = { ms: 0, input: '' };
    for (const p of PREFIXES) {
      for (const u of UNITS) {
        const input = p + u.repeat(Math.ceil(50_000 / u.length)) + '!';
        const started = process.hrtime.bigint();
        payloadViolation(validate, JSON.stringify(input));
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        if (ms > slowest.ms) slowest = { ms, input: `${p}${u}…` };
      }
    }
    expect({ format, slowest: slowest.ms < 1000 ? 'under 1 s' : slowest }).toEqual({ format, slowest: 'under 1 s' });
  });
});

describe('format "url"', () => {
  const validate = validatorOf('url');
  it('keeps ajv-formats\' meaning on ordinary values', () => {
    for (const ok of ['http://example.com', 'https://user:pw@example.com:8080/a?b#c', 'ftp://a.b.example.org/x', 'http://u@example.com', 'http://8.8.8.8/']) expect([ok, payloadViolation(validate, JSON.stringify(ok))]).toEqual([ok, undefined]);
    for (const bad of ['example.com', 'http://localhost', 'http://10.0.0.1/', 'http://a b.com', 'mailto:a@b.com', `http://${':'.repeat(1000)}`]) expect([bad, payloadViolation(validate, JSON.stringify(bad))?.keyword]).toEqual([bad, 'format']);
  });
});

describe('the budget of format checks', () => {
  it('charges each check its string\'s length, and refuses one over what is left before it runs', () => {
    const validate = validatorOf('email');
    const budget = newPatternBudget();
    expect(payloadViolation(validate, JSON.stringify('a@b.example'), undefined, budget)).toBeUndefined();
    expect(budget.left).toBe(PATTERN_BUDGET - 'a@b.example'.length);
    budget.left = 10;
    expect(payloadViolation(validate, JSON.stringify('a'.repeat(11)), undefined, budget)).toMatchObject({ keyword: 'budget', message: expect.stringContaining('"format email" on 11 characters') });
  });
});
