/**
 * The size guard's Content-Length pattern (docs/aws-parity.md): one pattern for the WAF rule of the
 * stack and the local gateway, refusing exactly the lengths of SIZE_GUARD_REFUSED_BYTES or more.
 */
import fc from 'fast-check';
import { SIZE_GUARD_CONTENT_LENGTH_PATTERN, SIZE_GUARD_REFUSED_BYTES, sizeGuardRefuses } from '../../lambda/core/rules/gateway-responses';

const seed = Number(process.env.FC_SEED ?? 25_2);
const numRuns = Number(process.env.FC_RUNS ?? 2000);

describe('size guard pattern', () => {
  it('refuses exactly the lengths at or above the threshold, whatever leading zeros', () => {
    fc.assert(
      fc.property(fc.oneof(fc.nat({ max: 20_000_000 }), fc.integer({ min: SIZE_GUARD_REFUSED_BYTES - 1000, max: SIZE_GUARD_REFUSED_BYTES + 1000 }), fc.nat()), fc.nat({ max: 3 }), (n, zeros) => {
        expect(sizeGuardRefuses('0'.repeat(zeros) + String(n))).toBe(n >= SIZE_GUARD_REFUSED_BYTES);
      }),
      { seed, numRuns },
    );
  });

  it('has the edges where they belong', () => {
    expect(sizeGuardRefuses('2999999')).toBe(false);
    expect(sizeGuardRefuses('3000000')).toBe(true);
    expect(sizeGuardRefuses('7340032')).toBe(true);
    expect(sizeGuardRefuses('10485761')).toBe(true);
    expect(sizeGuardRefuses('123456789012')).toBe(true);
    expect(sizeGuardRefuses('0')).toBe(false);
    expect(sizeGuardRefuses(undefined)).toBe(false);
    expect(sizeGuardRefuses('')).toBe(false);
    expect(sizeGuardRefuses('3000000x')).toBe(false);
  });

  it('uses no construct AWS WAF refuses (capturing groups, backreferences, lookaround)', () => {
    expect(SIZE_GUARD_CONTENT_LENGTH_PATTERN).not.toMatch(/\((?!\?:)/);
    expect(SIZE_GUARD_CONTENT_LENGTH_PATTERN).not.toMatch(/\\[1-9]|\(\?[=!<]/);
  });
});
