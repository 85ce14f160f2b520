import { Match } from 'aws-cdk-lib/assertions';
import { TABLES, type Projection } from '../../lambda/core/storage/tables';
import { tableNameOutput } from '../../lib/stack-outputs';
import { defaultStack } from './stack';

const { stack, template, logicalId } = defaultStack();
const definitions = Object.values(TABLES);
const tableResource = (id: keyof typeof TABLES) => template.toJSON().Resources[logicalId(stack.tables.byId[id])];

describe('DynamoDB tables', () => {
  it('creates one table per table definition and nothing else', () => {
    template.resourceCountIs('AWS::DynamoDB::Table', definitions.length);
  });

  it.each(definitions)('$id is on-demand, with point-in-time recovery, SSE, TTL and its keys', (def) => {
    const res = tableResource(def.id);
    expect(res.Properties).toMatchObject({
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      SSESpecification: { SSEEnabled: true },
      TimeToLiveSpecification: { AttributeName: def.ttlAttribute, Enabled: true },
      KeySchema: [
        { AttributeName: def.partitionKey.name, KeyType: 'HASH' },
        ...(def.sortKey ? [{ AttributeName: def.sortKey.name, KeyType: 'RANGE' }] : []),
      ],
    });
  });

  it.each(definitions)('$id has the local and global indexes of its definition', (def) => {
    const props = tableResource(def.id).Properties;
    const lsis = (def.localIndexes ?? []).map((i) => ({
      IndexName: i.indexName,
      KeySchema: [
        { AttributeName: def.partitionKey.name, KeyType: 'HASH' },
        { AttributeName: i.sortKey.name, KeyType: 'RANGE' },
      ],
      Projection: projection(i.projection),
    }));
    const gsis = (def.globalIndexes ?? []).map((i) => ({
      IndexName: i.indexName,
      KeySchema: [
        { AttributeName: i.partitionKey.name, KeyType: 'HASH' },
        ...(i.sortKey ? [{ AttributeName: i.sortKey.name, KeyType: 'RANGE' }] : []),
      ],
      Projection: projection(i.projection),
    }));
    expect(props.LocalSecondaryIndexes ?? []).toEqual(lsis);
    expect(props.GlobalSecondaryIndexes ?? []).toEqual(gsis);
  });

  it('has no hard-coded table names and keeps tables (and their data) when they leave the stack, unless the deploy that created them rolls back', () => {
    for (const def of definitions) {
      const res = tableResource(def.id);
      expect(res.Properties.TableName).toBeUndefined();
      expect(res.DeletionPolicy).toBe('RetainExceptOnCreate');
      expect(res.UpdateReplacePolicy).toBe('Retain');
      // Opt-in (tableDeletionProtection): a protected table would make that rollback fail.
      expect(res.Properties.DeletionProtectionEnabled).toBe(false);
    }
  });

  it('outputs every table name', () => {
    for (const def of definitions) {
      template.hasOutput(tableNameOutput(def.id), {
        Value: { Ref: logicalId(stack.tables.byId[def.id]) },
        Description: Match.stringLikeRegexp(def.envVar),
      });
    }
  });
});

function projection(p: Projection | undefined) {
  if (!p || p.type === 'ALL') return { ProjectionType: 'ALL' };
  if (p.type === 'KEYS_ONLY') return { ProjectionType: 'KEYS_ONLY' };
  return { ProjectionType: 'INCLUDE', NonKeyAttributes: p.attributes };
}
