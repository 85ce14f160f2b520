/**
 * Portal links and sessions in the metadata table, stored only by the SHA-256 hash of
 * their token, like API keys (../namespaces/storage/api-keys.ts). Each carries its namespace, its application, the
 * application's incarnation and portal generation it was issued under (a revoke moves it on: ./applications.ts
 * `bumpPortalGeneration`) and the hash of the API key that created the link: a session is metered
 * under that key's usage-plan twin in AWS (lambda/handlers/authorizer.ts) and ends with it.
 * Items expire by DynamoDB TTL after their own expiry; reads check the expiry themselves, since
 * TTL deletes within days, not at the second
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/howitworks-ttl.html).
 */
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, isConditionFailed, tableName, transactWrite } from '../../core/storage/client';
import { metaKeys, ttlSeconds } from '../../core/storage/keys';
import { hashApiKey } from '../../core/rules/auth';
import { credentialKind, type PortalCredential } from '../../core/rules/portal';
import type { Application } from '../rules';
import type { ApiKeyRecord } from '../../namespaces/storage/api-keys';

const TABLE = () => tableName('meta');

interface PortalGrant {
  namespace: string;
  application: string;
  generation: number;
  /** The application's incarnation it was issued to (../domain/applications.ts): a uid created again is another. */
  incarnation?: string;
  /** SHA-256 hash of the API key that created the link. */
  usage_key: string;
  created_at: number;
  expires_at: number;
}

export interface PortalLink extends PortalGrant {
  session_days: number;
  used_at?: number;
}

export type PortalSession = PortalGrant;

/** Stores a new link under the hash of its token. */
export async function putLink(token: string, link: PortalLink): Promise<void> {
  await ddb().send(
    new PutCommand({
      TableName: TABLE(),
      Item: { ...metaKeys.portalLink(hashApiKey(token)), ...link, ttl: ttlSeconds(link.expires_at) },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
}

export type Exchange = { session: PortalSession } | { refused: 'used' | 'revoked' };

/**
 * Uses a link once: marks it used, checks its application still has the generation it was issued
 * under, and stores the session, in one transaction. Of two concurrent exchanges of one link
 * exactly one succeeds (the conditional update), and a link revoked before its use opens nothing.
 */
export async function exchangeLink(linkToken: string, sessionToken: string, sessionMs: (days: number) => number, now: number): Promise<Exchange> {
  const key = metaKeys.portalLink(hashApiKey(linkToken));
  const read = await ddb().send(new GetCommand({ TableName: TABLE(), Key: key, ConsistentRead: true }));
  const link = read.Item as (PortalLink & { pk: string }) | undefined;
  if (!link || link.used_at !== undefined || link.expires_at <= now) return { refused: 'used' };
  const session: PortalSession = {
    namespace: link.namespace,
    application: link.application,
    generation: link.generation,
    ...(link.incarnation !== undefined ? { incarnation: link.incarnation } : {}),
    usage_key: link.usage_key,
    created_at: now,
    expires_at: now + sessionMs(link.session_days),
  };
  try {
    // Uses of one link at once meet on its item: one cancelled on a conflict is sent again, and
    // then finds the link used.
    await transactWrite({
      TransactItems: [
        {
          Update: {
            TableName: TABLE(),
            Key: key,
            UpdateExpression: 'SET used_at = :now',
            ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(used_at) AND expires_at > :now',
            ExpressionAttributeValues: { ':now': now },
          },
        },
        {
          ConditionCheck: {
            TableName: TABLE(),
            Key: metaKeys.application(link.namespace, link.application),
            ConditionExpression: `portal_generation = :g AND attribute_not_exists(deleting_at) AND ${link.incarnation === undefined ? 'attribute_not_exists(incarnation)' : 'incarnation = :i'}`,
            ExpressionAttributeValues: { ':g': link.generation, ...(link.incarnation === undefined ? {} : { ':i': link.incarnation }) },
          },
        },
        {
          Put: {
            TableName: TABLE(),
            Item: { ...metaKeys.portalSession(hashApiKey(sessionToken)), ...session, ttl: ttlSeconds(session.expires_at) },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
      ],
    });
    return { session };
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
    const reasons = (e as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
    return { refused: reasons[1]?.Code === 'ConditionalCheckFailed' && reasons[0]?.Code !== 'ConditionalCheckFailed' ? 'revoked' : 'used' };
  }
}

export interface ActivePortalCredential {
  kind: PortalCredential;
  grant: PortalGrant;
}

/**
 * The authorizer's lookup of a portal credential: the link (unused, within its 10 minutes) or
 * session (within its days) by hash, then, at once, its application (still there, not being
 * deleted, same incarnation and portal generation) and the API key that created it (not revoked). Undefined when
 * any of them says no. Three reads of one item each (the first two strongly consistent: 1 read
 * unit each for items under 4 KB, the key's 0.5); only portal credentials pay them, once per
 * authorizer cache entry in AWS.
 */
export async function findActivePortalCredential(token: string, now: number): Promise<ActivePortalCredential | undefined> {
  const kind = credentialKind(token);
  if (!kind) return undefined;
  const hash = hashApiKey(token);
  // Strongly consistent: the portal page uses its session the moment the exchange answers, and a
  // platform may send its customer to a link the moment it has it; an eventually consistent read
  // may miss an item just put (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.ReadConsistency.html),
  // which answered the session's first request 401 with its link already spent.
  const out = await ddb().send(new GetCommand({ TableName: TABLE(), Key: kind === 'link' ? metaKeys.portalLink(hash) : metaKeys.portalSession(hash), ConsistentRead: true }));
  const grant = out.Item as (PortalLink | PortalSession) | undefined;
  if (!grant || grant.expires_at <= now || (kind === 'link' && (grant as PortalLink).used_at !== undefined)) return undefined;
  const [app, key] = await Promise.all([
    ddb().send(new GetCommand({ TableName: TABLE(), Key: metaKeys.application(grant.namespace, grant.application), ConsistentRead: true })),
    // Strongly consistent: the key may have been created a moment before the link it made.
    ddb().send(new GetCommand({ TableName: TABLE(), Key: metaKeys.apiKeyByHash(grant.usage_key), ConsistentRead: true })),
  ]);
  const a = app.Item as Application | undefined;
  const k = key.Item as ApiKeyRecord | undefined;
  if (!a || a.deleting_at !== undefined || a.portal_generation !== grant.generation || a.incarnation !== grant.incarnation) return undefined;
  if (!k || k.revoked_at || k.namespace !== grant.namespace) return undefined;
  return { kind, grant };
}

/** The session a credential names, for `GET /portal/session` (the authorizer already judged it). */
export async function getSession(token: string): Promise<PortalSession | undefined> {
  // Consistent for the same reason as the authorizer's read: it is the session's first request.
  const out = await ddb().send(new GetCommand({ TableName: TABLE(), Key: metaKeys.portalSession(hashApiKey(token)), ConsistentRead: true }));
  return out.Item as PortalSession | undefined;
}
