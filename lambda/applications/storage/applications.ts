/**
 * Applications in the metadata table: one item per application in its namespace's
 * partition (`APP#{uid}`, so a list is one Query by uid), and a count item kept in the same
 * transaction as every create and delete (the per-namespace cap, exactly, as for resources in
 * ./resource-limits.ts). An application has no topic binding: publishing never reads it, so it
 * adds nothing per delivery.
 */
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, isConditionFailed, queryAll, tableName } from '../../core/storage/client';
import { metaKeys } from '../../core/storage/keys';
import { deleteCounted, putCounted } from '../../core/storage/resource-limits';
import type { Application } from '../rules';

const TABLE = () => tableName('meta');

export async function getApplication(ns: string, uid: string): Promise<Application | undefined> {
  // Consistent: a webhook created right after its application, or a link right after a revoke, must see it as it is now.
  const out = await ddb().send(new GetCommand({ TableName: TABLE(), Key: metaKeys.application(ns, uid), ConsistentRead: true }));
  return out.Item as Application | undefined;
}

/** Creates an application unless the uid is taken or the namespace is at `limit`. */
export async function createApplication(a: Application, limit: number): Promise<'created' | 'exists' | 'limit'> {
  return putCounted('meta', { ...metaKeys.application(a.namespace, a.uid), ...a }, metaKeys.applicationCount(a.namespace), limit);
}

/** How many applications the namespace has (the count item). */
export async function applicationCount(ns: string): Promise<number> {
  const out = await ddb().send(new GetCommand({ TableName: TABLE(), Key: metaKeys.applicationCount(ns), ConsistentRead: true }));
  return Math.max(0, Number(out.Item?.n ?? 0));
}

/** Every application of the namespace by uid (a list needs them all for its total, like resources). */
export const listApplications = (ns: string) =>
  queryAll<Application>({
    TableName: TABLE(),
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
    ExpressionAttributeValues: { ':pk': metaKeys.namespacePk(ns), ':p': metaKeys.applicationPrefix },
    // Strongly consistent: a list right after a create shows it.
    ConsistentRead: true,
  });

/** Replaces an application if it is still the version it was read at and not being deleted; false otherwise. */
export async function replaceApplication(a: Application): Promise<boolean> {
  try {
    await ddb().send(
      new PutCommand({
        TableName: TABLE(),
        Item: { ...metaKeys.application(a.namespace, a.uid), ...a },
        ConditionExpression: 'version = :v AND attribute_not_exists(deleting_at)',
        ExpressionAttributeValues: { ':v': a.version - 1 },
      }),
    );
    return true;
  } catch (e) {
    if (isConditionFailed(e)) return false;
    throw e;
  }
}

/**
 * Marks an application as being deleted (it takes no new webhook from then on, see
 * {@link applicationTakesWebhooks}) and answers it; undefined when it does not exist. Marking an
 * application already marked answers it again, so a DELETE cut short is finished by a retry.
 */
export async function markDeleting(ns: string, uid: string, now: number): Promise<Application | undefined> {
  try {
    const out = await ddb().send(
      new UpdateCommand({
        TableName: TABLE(),
        Key: metaKeys.application(ns, uid),
        UpdateExpression: 'SET deleting_at = if_not_exists(deleting_at, :now) ADD portal_generation :one',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':now': now, ':one': 1 },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return out.Attributes as Application;
  } catch (e) {
    if (isConditionFailed(e)) return undefined;
    throw e;
  }
}

/** Removes the application's item and counts it out; false when it was already gone. */
export const removeApplication = (ns: string, uid: string): Promise<boolean> => deleteCounted('meta', metaKeys.application(ns, uid), metaKeys.applicationCount(ns));

/**
 * Revokes every portal link and session of the application at once: they carry the generation
 * they were issued under, and the authorizer refuses one whose generation is no longer the
 * application's (lambda/applications/storage/portal.ts). Answers the application, undefined when missing.
 */
export async function bumpPortalGeneration(ns: string, uid: string): Promise<Application | undefined> {
  try {
    const out = await ddb().send(
      new UpdateCommand({
        TableName: TABLE(),
        Key: metaKeys.application(ns, uid),
        UpdateExpression: 'ADD portal_generation :one',
        ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(deleting_at)',
        ExpressionAttributeValues: { ':one': 1 },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return out.Attributes as Application;
  } catch (e) {
    if (isConditionFailed(e)) return undefined;
    throw e;
  }
}

/**
 * A transaction item that holds only while the application exists and is not being deleted:
 * written with a webhook that belongs to it, so no webhook is ever left behind by a delete that
 * ran at the same time (DynamoDB's ConditionCheck:
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_ConditionCheck.html).
 */
export const applicationTakesWebhooks = (ns: string, uid: string) => ({
  ConditionCheck: {
    TableName: TABLE(),
    Key: metaKeys.application(ns, uid),
    ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(deleting_at)',
  },
});
