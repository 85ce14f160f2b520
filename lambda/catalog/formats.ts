/**
 * The string formats of enforced schemas (`format`, ajv-formats' full set), bounded like
 * patterns: each check runs in time about linear in its string, and is charged the string's
 * length to the publish's pattern budget (./rules/pattern-cost.ts) before it runs, so that a batch of
 * long strings cannot hold a publish through formats either (docs/catalog.md, "Formats").
 *
 * ajv-formats checks most formats with a regular expression on V8's default (backtracking)
 * engine, some with a function that runs a few anchored expressions (date-time, uri, byte;
 * https://github.com/ajv-validator/ajv-formats/blob/master/src/formats.ts). Fuzzed at 50,000
 * characters (test/unit/catalog-formats.test.ts), all answer in milliseconds but `url`, whose
 * optional user-info `(?:\S+(?::\S*)?@)?` splits a run of `:` in quadratically many ways:
 * "http://" and 120,000 `:` took 38.6 s. That group matches exactly what `(?:\S+@)?` matches
 * (a non-empty run of non-space characters then `@`: `:` is one of them), which has one way
 * to match a string, so `url` runs that expression: same meaning, linear time.
 */
import type Ajv from 'ajv';
import { chargePattern, type PatternShape } from './rules/pattern-cost';

/** ajv-formats' `url` with its user-info group written so it cannot split a run ambiguously. */
const LINEAR_URL =
  /^(?:https?|ftp):\/\/(?:\S+@)?(?:(?!(?:10|127)(?:\.\d{1,3}){3})(?!(?:169\.254|192\.168)(?:\.\d{1,3}){2})(?!172\.(?:1[6-9]|2\d|3[0-1])(?:\.\d{1,3}){2})(?:[1-9]\d?|1\d\d|2[01]\d|22[0-3])(?:\.(?:1?\d{1,2}|2[0-4]\d|25[0-5])){2}(?:\.(?:[1-9]\d?|1\d\d|2[0-4]\d|25[0-4]))|(?:(?:[a-z0-9\u{00a1}-\u{ffff}]+-)*[a-z0-9\u{00a1}-\u{ffff}]+)(?:\.(?:[a-z0-9\u{00a1}-\u{ffff}]+-)*[a-z0-9\u{00a1}-\u{ffff}]+)*(?:\.(?:[a-z\u{00a1}-\u{ffff}]{2,})))(?::\d{2,5})?(?:\/[^\s]*)?$/iu;

/** A format check costs one unit per character, as a pattern of one atom does. */
const ONE_PASS: PatternShape = { atoms: 1, width: Infinity, anchored: false, safe: true };

type Check = (s: string) => boolean;
type Format = RegExp | Check | { type?: string; validate: RegExp | Check | string; compare?: unknown; async?: boolean } | true | string;

const checkOf = (v: RegExp | Check | string): Check => {
  const rx = typeof v === 'string' ? new RegExp(v, 'u') : v;
  return rx instanceof RegExp ? (s) => ((rx.lastIndex = 0), rx.test(s)) : rx;
};

/**
 * Replaces every string format on `a` (after ajv-formats' addFormats) with the same check,
 * `url` with LINEAR_URL, each charged its string's length to the running budget first. Number
 * formats (int32, float) and formats that check nothing (`password`, `binary`) stay as they are.
 */
export function boundFormats(a: Ajv): void {
  for (const [name, f] of Object.entries(a.formats as Record<string, Format | undefined>)) {
    if (f === undefined || f === true) continue;
    const def = typeof f === 'object' && !(f instanceof RegExp) ? f : { validate: f };
    if (def.type !== undefined && def.type !== 'string') continue;
    if (def.async) continue;
    const check = checkOf(name === 'url' ? LINEAR_URL : def.validate);
    const label = `format ${name}`;
    a.addFormat(name, {
      ...def,
      type: 'string',
      validate: (s: string) => {
        chargePattern(label, ONE_PASS, s, s.length);
        return check(s);
      },
    } as never);
  }
}
