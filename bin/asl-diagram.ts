/**
 * A Mermaid state diagram of an Amazon States Language definition (the webhook retry workflow,
 * lambda/webhooks/workflows/webhook-retry.asl.json), so the README's picture is generated from the file
 * Step Functions runs and cannot drift from it (bin/diagrams.ts writes it; a unit test diffs it).
 * Covers what the workflow uses: Choice rules (with And, Or, Not), Wait, Task (with its action
 * and Retry), Succeed, Fail, Pass, Next and End.
 */

interface ChoiceRule {
  Variable?: string;
  Next?: string;
  And?: ChoiceRule[];
  Or?: ChoiceRule[];
  Not?: ChoiceRule;
  [comparator: string]: unknown;
}

interface AslState {
  Type: string;
  Comment?: string;
  Next?: string;
  End?: boolean;
  Default?: string;
  Choices?: ChoiceRule[];
  Seconds?: number;
  SecondsPath?: string;
  Parameters?: Record<string, unknown>;
  Retry?: { ErrorEquals: string[]; MaxAttempts?: number }[];
  Catch?: { ErrorEquals: string[]; Next: string }[];
}

export interface AslDefinition {
  StartAt: string;
  States: Record<string, AslState>;
}

const OPERATORS: Record<string, string> = {
  StringEquals: '=',
  NumericEquals: '=',
  BooleanEquals: '=',
  NumericGreaterThan: '>',
  NumericGreaterThanEquals: '>=',
  NumericLessThan: '<',
  NumericLessThanEquals: '<=',
  StringGreaterThan: '>',
  StringLessThan: '<',
};

const path = (p: string) => p.replace(/^\$\./, '');

/** A Choice rule as text: `outcome = retry`, `a > 0 or b = x`. */
export function ruleText(rule: ChoiceRule): string {
  if (rule.And) return rule.And.map(ruleText).join(' and ');
  if (rule.Or) return rule.Or.map(ruleText).join(' or ');
  if (rule.Not) return `not (${ruleText(rule.Not)})`;
  const comparator = Object.keys(rule).find((k) => k !== 'Variable' && k !== 'Next');
  if (!rule.Variable || !comparator) return 'rule';
  const op = OPERATORS[comparator.replace(/Path$/, '')] ?? comparator;
  const value = rule[comparator];
  return `${path(rule.Variable)} ${op} ${comparator.endsWith('Path') ? path(String(value)) : String(value)}`;
}

function describe(name: string, s: AslState): string {
  switch (s.Type) {
    case 'Task': {
      const action = s.Parameters?.action;
      return `${name} (Task${typeof action === 'string' ? `: ${action}` : ''})`;
    }
    case 'Wait':
      return `${name} (Wait: ${s.SecondsPath ? `${path(s.SecondsPath)} s` : `${s.Seconds} s`})`;
    default:
      return `${name} (${s.Type})`;
  }
}

/** The diagram's Mermaid source (`stateDiagram-v2`), states in file order. */
export function aslToMermaid(def: AslDefinition): string {
  const lines = ['stateDiagram-v2'];
  const entries = Object.entries(def.States);
  for (const [name, s] of entries) lines.push(`    state "${describe(name, s)}" as ${name}`);
  lines.push(`    [*] --> ${def.StartAt}`);
  for (const [name, s] of entries) {
    for (const c of s.Choices ?? []) if (c.Next) lines.push(`    ${name} --> ${c.Next}: ${ruleText(c)}`);
    if (s.Default) lines.push(`    ${name} --> ${s.Default}: otherwise`);
    if (s.Next) lines.push(`    ${name} --> ${s.Next}`);
    for (const c of s.Catch ?? []) lines.push(`    ${name} --> ${c.Next}: error ${c.ErrorEquals.join(', ')}`);
    if (s.End || s.Type === 'Succeed' || s.Type === 'Fail') lines.push(`    ${name} --> [*]`);
  }
  for (const [name, s] of entries) {
    if (!s.Retry?.length) continue;
    const retries = s.Retry.map((r) => `${r.ErrorEquals.includes('States.ALL') ? 'any error' : 'Lambda service errors'} up to ${r.MaxAttempts ?? 3} times`);
    lines.push(`    note right of ${name} : retried on ${retries.join(', ')}`);
  }
  return `${lines.join('\n')}\n`;
}
