/**
 * One DynamoDB table per entry of `TABLES` (lambda/core/storage/tables.ts), the same definitions the
 * local runtime creates in DynamoDB Local. A table added there appears here with no code change.
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, Table, TableEncryption, type Attribute } from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import { TABLES, type KeyAttribute, type Projection, type TableDefinition, type TableId } from '../../lambda/core/storage/tables';

export interface TablesProps {
  /**
   * What happens to the tables (and their data) when they leave the stack.
   * @default RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE: deleting the stack or replacing a table
   * never deletes messages or keys; the rollback of the deploy that created a table deletes it
   * (it is new and empty), so a failed first deploy leaves no tables behind
   */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * DynamoDB deletion protection. CloudFormation cannot delete a protected table, not even in the
   * rollback of the deploy that created it, so a protected table is kept with plain
   * `RemovalPolicy.RETAIN` (RetainExceptOnCreate would turn that rollback into ROLLBACK_FAILED).
   * @default false
   */
  readonly deletionProtection?: boolean;
}

const attribute = (a: KeyAttribute): Attribute => ({
  name: a.name,
  type: a.type === 'S' ? AttributeType.STRING : AttributeType.NUMBER,
});

/** An index's projection (ALL when the definition names none). */
function projection(p: Projection | undefined) {
  if (!p || p.type === 'ALL') return { projectionType: ProjectionType.ALL };
  if (p.type === 'KEYS_ONLY') return { projectionType: ProjectionType.KEYS_ONLY };
  return { projectionType: ProjectionType.INCLUDE, nonKeyAttributes: p.attributes };
}

/** `queueMessages` → `QueueMessages`: construct ids, hence stable logical ids. */
export const pascal = (id: string): string => `${id[0].toUpperCase()}${id.slice(1)}`;

export class Tables extends Construct {
  readonly byId: Record<TableId, Table>;

  constructor(scope: Construct, id: string, props: TablesProps = {}) {
    super(scope, id);
    const deletionProtection = props.deletionProtection ?? false;
    if (deletionProtection && props.removalPolicy === RemovalPolicy.DESTROY) {
      throw new Error('table deletion protection contradicts RemovalPolicy.DESTROY');
    }
    const removalPolicy = deletionProtection ? RemovalPolicy.RETAIN : (props.removalPolicy ?? RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE);
    this.byId = Object.fromEntries(
      Object.values(TABLES).map((def) => [def.id, this.table(def, removalPolicy, deletionProtection)]),
    ) as Record<TableId, Table>;
  }

  private table(def: TableDefinition, removalPolicy: RemovalPolicy, deletionProtection: boolean): Table {
    const table = new Table(this, pascal(def.id), {
      partitionKey: attribute(def.partitionKey),
      sortKey: def.sortKey && attribute(def.sortKey),
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      // The AWS managed key (aws/dynamodb) rather than the default AWS owned key: the same
      // encryption at rest, but its use is visible in CloudTrail and in the template.
      encryption: TableEncryption.AWS_MANAGED,
      timeToLiveAttribute: def.ttlAttribute,
      // Without deletion protection an accidental DeleteTable outside CloudFormation is still
      // recoverable: DynamoDB keeps a system backup of a PITR-enabled table for 35 days.
      deletionProtection,
      removalPolicy,
    });
    for (const lsi of def.localIndexes ?? []) {
      table.addLocalSecondaryIndex({ indexName: lsi.indexName, sortKey: attribute(lsi.sortKey), ...projection(lsi.projection) });
    }
    for (const gsi of def.globalIndexes ?? []) {
      table.addGlobalSecondaryIndex({
        indexName: gsi.indexName,
        partitionKey: attribute(gsi.partitionKey),
        sortKey: gsi.sortKey && attribute(gsi.sortKey),
        ...projection(gsi.projection),
      });
    }
    return table;
  }
}
