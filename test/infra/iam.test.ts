/**
 * Least privilege: each function's role allows exactly the table access that lib/table-access.ts
 * lists, and that list covers every table the function's code names. A missing grant would only
 * show in AWS (AccessDenied), never locally, so the bundle of each function is checked here.
 */
import { bundleText } from './bundle';
import { TABLES, type TableId } from '../../lambda/storage/tables';
import { TABLE_ACCESS, type FunctionId } from '../../lib/table-access';
import { actions, defaultStack, type Statement } from './stack';

const { stack, template, logicalId, statementsOf } = defaultStack();
const resources = template.toJSON().Resources as Record<string, { Type: string; Properties: any }>;
const functionIds = [...stack.functions.all.keys()];

const WRITE_ACTIONS = ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'];

const tablesIn = (s: Statement): TableId[] =>
  (Object.keys(TABLES) as TableId[]).filter((t) => JSON.stringify(s.Resource).includes(`"${logicalId(stack.tables.byId[t])}"`));

/** Table access the role of `id` has: table → the DynamoDB actions allowed on it. */
function dynamoAccess(id: FunctionId): Map<TableId, Set<string>> {
  const out = new Map<TableId, Set<string>>();
  for (const s of statementsOf(id)) {
    const dynamo = actions(s).filter((a) => a.startsWith('dynamodb:'));
    if (dynamo.length === 0) continue;
    expect(s.Effect).toBe('Allow');
    const tables = tablesIn(s);
    expect(tables.length).toBeGreaterThan(0); // never dynamodb:* on Resource *
    for (const t of tables) dynamo.forEach((a) => (out.get(t) ?? out.set(t, new Set()).get(t)!).add(a));
  }
  return out;
}

/** Tables the code bundled into function `id` names through `tableName('…')`. */
function tablesNamedByCode(id: FunctionId): TableId[] {
  return [...new Set([...bundleText(id).matchAll(/tableName\d*\("(\w+)"\)/g)].map((m) => m[1] as TableId))];
}

describe('IAM', () => {
  it.each(functionIds)('%s may use exactly the tables TABLE_ACCESS lists, with that access', (id) => {
    const access = dynamoAccess(id);
    const grants = TABLE_ACCESS[id];
    expect([...access.keys()].sort()).toEqual(Object.keys(grants).sort());
    for (const [table, allowed] of access) {
      const writes = WRITE_ACTIONS.filter((a) => allowed.has(a));
      if (grants[table] === 'read') expect(writes).toEqual([]);
      else expect(writes).toEqual(WRITE_ACTIONS);
      if (grants[table] !== 'write') expect(allowed).toContain('dynamodb:Query');
    }
  });

  it.each(functionIds)('%s is granted every table its code names', (id) => {
    const granted = Object.keys(TABLE_ACCESS[id]);
    const named = tablesNamedByCode(id);
    expect(named.length).toBeGreaterThan(0); // the scan still finds table accesses at all
    for (const table of named) expect({ table, granted: granted.includes(table) }).toEqual({ table, granted: true });
  });

  it('lets the authorizer only read the meta table', () => {
    const access = dynamoAccess('authorizer');
    expect([...access.keys()]).toEqual(['meta']);
    const meta = [...access.get('meta')!];
    expect(meta.filter((a) => !/^dynamodb:(Get|BatchGet|Query|Scan|DescribeTable|ConditionCheckItem|GetRecords|GetShardIterator)/.test(a))).toEqual([]);
  });

  it.each(functionIds)('%s writes logs only to its own log group and traces to X-Ray', (id) => {
    const fn = resources[logicalId(stack.functions.all.get(id)!)];
    const logGroup = fn.Properties.LoggingConfig.LogGroup.Ref;
    for (const s of statementsOf(id)) {
      if (actions(s).some((a) => a.startsWith('logs:'))) {
        expect(actions(s).sort()).toEqual(['logs:CreateLogStream', 'logs:PutLogEvents']);
        expect(s.Resource).toEqual({ 'Fn::GetAtt': [logGroup, 'Arn'] });
      }
      if (s.Resource === '*') expect(actions(s).sort()).toEqual(['xray:PutTelemetryRecords', 'xray:PutTraceSegments']);
    }
  });
});
