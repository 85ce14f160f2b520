/**
 * A model of how CloudWatch evaluates the metric math of an alarm, for the subset our alarms use
 * (numbers, metric ids, + - * /, comparisons, IF, FILL), so tests can show what an expression
 * yields when some of its series have no datapoint.
 *
 * The rules modelled (CloudWatch user guide, "Using math expressions with CloudWatch metrics"):
 * arithmetic between two time series yields a datapoint only at timestamps where both have one
 * (a metric that published nothing in a period has no datapoint there, it is not 0); a scalar
 * combines with every datapoint; FILL(m, v) gives m a datapoint at every timestamp of the query,
 * v where it had none; IF(c, a, b) yields a datapoint where c has one.
 */
type Value = number | undefined;
type Node = (at: (id: string) => Value) => Value;

const TOKEN = /\s*(>=|<=|==|!=|[()+\-*/,<>]|[A-Za-z_][A-Za-z0-9_]*|\d+(?:\.\d+)?)/y;

function tokenize(expression: string): string[] {
  const out: string[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < expression.trimEnd().length) {
    const m = TOKEN.exec(expression);
    if (!m) throw new Error(`cannot read ${expression.slice(TOKEN.lastIndex)}`);
    out.push(m[1]);
  }
  return out;
}

const lift = (f: (a: number, b: number) => number) => (a: Value, b: Value): Value => (a === undefined || b === undefined ? undefined : f(a, b));
const BINARY: Record<string, (a: Value, b: Value) => Value> = {
  '+': lift((a, b) => a + b),
  '-': lift((a, b) => a - b),
  '*': lift((a, b) => a * b),
  '/': lift((a, b) => a / b),
  '>=': lift((a, b) => Number(a >= b)),
  '<=': lift((a, b) => Number(a <= b)),
  '>': lift((a, b) => Number(a > b)),
  '<': lift((a, b) => Number(a < b)),
  '==': lift((a, b) => Number(a === b)),
  '!=': lift((a, b) => Number(a !== b)),
};

function parse(expression: string): Node {
  const t = tokenize(expression);
  let i = 0;
  const expect = (s: string) => {
    if (t[i++] !== s) throw new Error(`expected ${s} in ${expression}`);
  };
  const binary = (next: () => Node, ops: string[]) => (): Node => {
    let left = next();
    while (ops.includes(t[i])) {
      const op = BINARY[t[i++]];
      const [l, r] = [left, next()];
      left = (at) => op(l(at), r(at));
    }
    return left;
  };
  const primary = (): Node => {
    const tok = t[i++];
    if (tok === '(') {
      const inner = comparison();
      expect(')');
      return inner;
    }
    if (/^\d/.test(tok)) return () => Number(tok);
    if (tok === 'FILL' || tok === 'IF') {
      expect('(');
      const args = [comparison()];
      while (t[i] === ',') {
        i++;
        args.push(comparison());
      }
      expect(')');
      if (tok === 'FILL') return (at) => args[0](at) ?? args[1](at);
      return (at) => {
        const c = args[0](at);
        return c === undefined ? undefined : c ? args[1](at) : args[2](at);
      };
    }
    if (/^[a-z]/.test(tok)) return (at) => at(tok);
    throw new Error(`unexpected ${tok} in ${expression}`);
  };
  const product = binary(primary, ['*', '/']);
  const sum = binary(product, ['+', '-']);
  const comparison = binary(sum, ['>=', '<=', '>', '<', '==', '!=']);
  const root = comparison();
  if (i !== t.length) throw new Error(`unexpected ${t[i]} in ${expression}`);
  return root;
}

/**
 * The value of `expression` in one period, given the datapoint of each metric id in that period
 * (omit an id, or give undefined, for a metric without a datapoint). `undefined`: no datapoint,
 * which an alarm with `treatMissingData: notBreaching` treats as fine.
 * @example evaluate('a + b', { a: 12 }) // undefined
 * @example evaluate('FILL(a, 0) + FILL(b, 0)', { a: 12 }) // 12
 */
export function evaluate(expression: string, datapoints: Record<string, number | undefined>): number | undefined {
  return parse(expression)((id) => datapoints[id]);
}

/** The metric ids an expression references. */
export const referencedIds = (expression: string): string[] => tokenize(expression).filter((x) => /^[a-z]/.test(x));
