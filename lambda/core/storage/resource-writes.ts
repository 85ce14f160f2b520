/**
 * Writes of filtered resources (./resources.ts) and their topic bindings. Every change of a
 * binding is one transaction that also bumps the namespace's bindings version, so a publish that
 * starts after the change returns sees it (DESIGN.md section 4): publish reads the version (one
 * strongly consistent GetItem) before trusting its cached index. The same transaction counts the
 * resource and its binding under the namespace's caps (./resource-limits.ts).
 */
import { conflictBackoffMs, isConditionFailed, onceToken, tableName, transactWrite } from './client';
import { serviceUnavailable } from '../rules/errors';
import { metaKeys, type ResourceKind } from './keys';
import { limitNameOf, resourceLimitExceeded, topicFilterLimitExceeded } from '../rules/resource-limits';
import { countBindingIn, countBindingOut, countResourceIn, countResourceOut, namespaceCaps, resourceCount, filterBindingCount, filterCounts, type NamespaceCaps } from './resource-limits';
import { fanoutLimitExceeded, maxReach } from '../rules/fanout-budget';
import { bindingsVersion, getResource, purgeJobKey, type Binding, type ResourceItem } from './resources';

const bindingKey = (ns: string, kind: ResourceKind, name: string) => ({ pk: metaKeys.namespacePk(ns), sk: `BIND#${kind}#${name}` });
const BINDINGS_VERSION = metaKeys.publishVersions;

function bindingPut(ns: string, item: ResourceItem, settings: Record<string, unknown>) {
  const binding: Binding = { kind: item.kind, name: item.name, id: item.id, topic_filter: item.topic_filter, settings };
  return { Put: { TableName: tableName('meta'), Item: { ...bindingKey(ns, item.kind, item.name), binding } } };
}

/**
 * Transaction item: the bindings version one more. `upTo`, from a create's judged reach
 * ({@link assertFanout}), makes it hold only while the version is at most that: no more binding
 * writes committed since the counts were read than the room the reach left. A condition on an
 * item the transaction writes anyway costs nothing more.
 */
function versionBump(ns: string, upTo?: number) {
  return {
    Update: {
      TableName: tableName('meta'),
      Key: BINDINGS_VERSION(ns),
      UpdateExpression: 'ADD version :one',
      ...(upTo === undefined ? {} : { ConditionExpression: 'attribute_not_exists(version) OR version <= :upto' }),
      ExpressionAttributeValues: { ':one': 1, ...(upTo === undefined ? {} : { ':upto': upTo }) },
    },
  };
}

/** What else a resource write counts, besides the resource, its binding and the version. */
interface Counting {
  /** The namespace's caps, read before the write. */
  caps: NamespaceCaps;
  /** A create: one more resource of its kind. */
  newResource: boolean;
  /** The filter the resource stops binding (an update that changes it), counted out. */
  previousFilter?: string;
  /** An update: whether the stored item's binding was counted in its filter ({@link countsInFilter}). */
  previousCounted?: boolean;
}

/**
 * Whether a resource's binding counts in its filter's binding count, and so in the reach one
 * publish may have (bindings-per-topic-filter, bindings-per-publish). A webhook of an application
 * does not: it takes only messages addressed to that application (docs/portal.md), so a thousand
 * customers' webhooks on one topic reach one customer's per message, and they are counted per
 * application instead (webhooks-per-application).
 */
const countsInFilter = (item: ResourceItem): boolean => !applicationOfItem(item);
const applicationOfItem = (item: ResourceItem): string | undefined => (item as { config?: { application?: string } }).config?.application;

/**
 * Whether a stored item's binding is counted in its filter: what its write recorded
 * (`filter_counted`), or true for an item written before the flag, when every binding counted
 * (an application's webhook of then is counted out by its next rewrite or its delete).
 */
export const wasCountedInFilter = (stored: ResourceItem): boolean => (stored as { filter_counted?: boolean }).filter_counted ?? true;

/**
 * Writes a resource, its binding and the bindings version in one transaction, if `condition`
 * holds for the resource item; returns false when it does not. A create also counts the
 * resource and its filter's binding in, an update that changes the filter moves its binding
 * count; each under the namespace's cap, refused with 409 LIMIT_EXCEEDED (nothing written).
 */
async function writeResource(
  item: ResourceItem,
  settings: Record<string, unknown>,
  condition: { expression: string; values?: Record<string, unknown> },
  counting: Counting,
  companions: Record<string, unknown>[] = [],
  checks: Check[] = [],
): Promise<boolean> {
  const ns = item.namespace;
  const counts: { item: object; refusal: () => Error }[] = [];
  if (counting.newResource) counts.push({ item: countResourceIn(ns, item.kind, counting.caps), refusal: () => resourceLimitExceeded(item.kind, counting.caps[limitNameOf(item.kind)]) });
  const counted = countsInFilter(item);
  const wasCounted = !counting.newResource && counting.previousFilter !== undefined && (counting.previousCounted ?? true);
  const filterChanged = !counting.newResource && counting.previousFilter !== undefined && counting.previousFilter !== item.topic_filter;
  const countIn = counted && (counting.newResource || !wasCounted || filterChanged);
  // The stored binding leaves its filter's count: its filter changed, or it no longer counts.
  const moves = wasCounted && (filterChanged || !counted);
  if (countIn) counts.push({ item: countBindingIn(ns, item.topic_filter, counting.caps), refusal: () => topicFilterLimitExceeded(item.topic_filter, counting.caps['bindings-per-topic-filter']) });
  for (let judged = 1; ; judged++) {
    // The reach is judged on the counts as of a bindings version; the transaction holds only if
    // no more binding writes than the room left have committed since ({@link assertFanout}).
    const upTo = countIn ? await assertFanout(ns, item.topic_filter, counting.caps, moves ? counting.previousFilter : undefined) : undefined;
    const once = onceToken();
    try {
      // Concurrent creates in one namespace share the version and counter items; AWS cancels
      // overlapping transactions with `TransactionConflict` and writes nothing, so transactWrite
      // sends it again (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-conflict-handling).
      await transactWrite(
        {
          TransactItems: [
            {
              Put: {
                TableName: tableName('meta'),
                Item: { ...metaKeys.resource(ns, item.kind, item.name), ...item, filter_counted: counted },
                ConditionExpression: condition.expression,
                ...(condition.values ? { ExpressionAttributeValues: condition.values } : {}),
              },
            },
            bindingPut(ns, item, settings),
            versionBump(ns, upTo),
            ...counts.map((c) => c.item),
            ...(moves ? [countBindingOut(ns, counting.previousFilter as string)] : []),
            ...companions.map((Item) => ({ Put: { TableName: tableName('meta'), Item } })),
            ...checks.map((c) => c.item),
          ] as never,
        },
        { retries: RESOURCE_CONFLICT_RETRIES, once },
      );
      return true;
    } catch (e) {
      if (once.maybeApplied && counting.newResource && (await createdIt(item))) return true;
      if (!isConditionFailed(e)) throw e;
      const reasons = (e as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
      if (reasons[0]?.Code === 'ConditionalCheckFailed') return false;
      const refused = counts.find((_, i) => reasons[3 + i]?.Code === 'ConditionalCheckFailed');
      if (refused) throw refused.refusal();
      const failedCheck = checks.find((_, i) => reasons[reasons.length - checks.length + i]?.Code === 'ConditionalCheckFailed');
      if (failedCheck) throw failedCheck.refusal();
      if (upTo === undefined || reasons[2]?.Code !== 'ConditionalCheckFailed') return false;
      // Only creates near the cap judge again: each round some commit, and the others, after a
      // random wait, see them and are refused or fit; past REJUDGES, 503 (nothing written).
      if (judged >= REJUDGES) throw serviceUnavailable(1);
      await new Promise((r) => setTimeout(r, conflictBackoffMs(judged)));
    }
  }
}

/**
 * Whether a create whose call failed after a try that may have been applied (every attempt's
 * answer lost) was: the stored item is this incarnation (its id is new to this create).
 */
async function createdIt(item: ResourceItem): Promise<boolean> {
  const stored = await getResource(item.namespace, item.kind, item.name, { consistent: true }).catch(() => undefined);
  return stored?.id === item.id;
}

// Sixteen sends (fifteen again after the first): eight PATCHes of one webhook at once all meet on
// its item, its binding and the namespace version; with eight tries one of them ran out once in a
// CI run (503). Deletes, which meet the same items, share it.
const RESOURCE_CONFLICT_RETRIES = 15;
/** Judgings of the reach of a create that meets other binding writes before it answers 503. */
const REJUDGES = 16;

/** A condition on another item the write needs (a webhook's application), and the error when it fails. */
export interface Check {
  item: Record<string, unknown>;
  refusal: () => Error;
}

/**
 * 409 LIMIT_EXCEEDED when one more binding of `topicFilter` would let one publish reach more than
 * the namespace's `bindings-per-publish` (../domain/fanout-budget.ts); `leaving` is the filter a
 * moving binding leaves. Returns the highest bindings version a write so judged may commit at:
 * the version read before the counts (both strongly consistent, so every binding write committed
 * before that read is in the counts) plus the room the reach leaves under the cap. A binding
 * write adds at most one to the reach of any topic, so the cap holds for every topic the filter
 * matches if no more than that many commit in between ({@link versionBump}).
 */
async function assertFanout(ns: string, topicFilter: string, caps: NamespaceCaps, leaving?: string): Promise<number> {
  const at = await bindingsVersion(ns);
  const counts = await filterCounts(ns);
  if (leaving !== undefined) counts.set(leaving, Math.max(0, (counts.get(leaving) ?? 0) - 1));
  const reach = maxReach(topicFilter, counts);
  if (reach > caps['bindings-per-publish']) throw fanoutLimitExceeded(topicFilter, reach, caps['bindings-per-publish']);
  return at + caps['bindings-per-publish'] - reach;
}

/**
 * Refuses early (409 LIMIT_EXCEEDED) when the namespace is already at its cap for the kind or the
 * filter, before a create does work outside the table (a queue's SQS queue). Only a hint: the
 * create's transaction is what enforces the cap exactly.
 */
export async function assertRoomFor(ns: string, kind: ResourceKind, topicFilter: string): Promise<void> {
  const [caps, count, bound] = await Promise.all([namespaceCaps(ns), resourceCount(ns, kind), filterBindingCount(ns, topicFilter)]);
  if (count >= caps[limitNameOf(kind)]) throw resourceLimitExceeded(kind, caps[limitNameOf(kind)]);
  if (bound >= caps['bindings-per-topic-filter']) throw topicFilterLimitExceeded(topicFilter, caps['bindings-per-topic-filter']);
  await assertFanout(ns, topicFilter, caps);
}

/**
 * Creates a resource and its binding, and the `companions` items of the new incarnation (a
 * queue's counters) in the same transaction; returns false when the name is taken in the
 * namespace, throws 409 LIMIT_EXCEEDED at the namespace's cap for the kind or the filter.
 */
export const createResource = async (item: ResourceItem, settings: Record<string, unknown>, companions: Record<string, unknown>[] = [], checks: Check[] = []): Promise<boolean> =>
  writeResource(item, settings, { expression: 'attribute_not_exists(pk)' }, { caps: await namespaceCaps(item.namespace), newResource: true }, companions, checks);

/**
 * Replaces a resource (same id) and its binding, if the stored item is still the version the
 * replacement was made from (`item.version - 1`; 0 for an item written before versions existed).
 * Returns false when it is not: changed by a concurrent update, deleted, or recreated with another
 * id. The caller reads again and decides, so two concurrent read-modify-writes never lose one.
 * `previousFilter` is the stored item's filter: a new one must have room (409 LIMIT_EXCEEDED);
 * `previousCounted` whether the stored item counted in it ({@link wasCountedInFilter}).
 */
export async function replaceResource(item: ResourceItem & { version: number }, settings: Record<string, unknown>, previousFilter: string, checks: Check[] = [], previousCounted = true): Promise<boolean> {
  const expected = item.version - 1;
  const caps = previousFilter === item.topic_filter && previousCounted === countsInFilter(item) ? undefined : await namespaceCaps(item.namespace);
  return writeResource(
    item,
    settings,
    {
      expression: `attribute_exists(pk) AND id = :id AND topic_filter = :tf AND ${expected === 0 ? 'attribute_not_exists(version)' : 'version = :v'}`,
      values: { ':id': item.id, ':tf': previousFilter, ...(expected === 0 ? {} : { ':v': expected }) },
    },
    { caps: caps as NamespaceCaps, newResource: false, previousFilter, previousCounted },
    [],
    checks,
  );
}

/** Further writes a kind makes in the delete transaction of its resource (a log's head marked deleted). */
export type ExtraWrites = Record<string, unknown>[];

/**
 * Deletes a resource and its binding at once (with `extra`, the kind's own writes) and leaves a
 * purge job for its data; returns the deleted item, or undefined when it did not exist.
 */
export async function deleteResource<T extends ResourceItem>(ns: string, kind: ResourceKind, name: string, now: number, extra?: (current: T) => ExtraWrites): Promise<T | undefined> {
  for (let attempt = 0; attempt < 3; attempt++) {
    // Consistent: a resource created just before its delete must be found.
    const current = await getResource<T>(ns, kind, name, { consistent: true });
    if (!current) return undefined;
    // The counts it moves are judged from this read, so the delete holds only if what decides
    // them is unchanged: filter, application and whether it was counted (a concurrent update that
    // moved them has already counted the binding out or in).
    const app = applicationOfItem(current);
    const counted = (current as { filter_counted?: boolean }).filter_counted;
    try {
      // Deletes and creates at once in one namespace write its count and version items: a
      // transaction cancelled on a conflict wrote nothing, and transactWrite sends it again.
      await transactWrite(
        {
          TransactItems: [
            {
              Delete: {
                TableName: tableName('meta'),
                Key: metaKeys.resource(ns, kind, name),
                ConditionExpression: `id = :id AND topic_filter = :tf AND ${app === undefined ? 'attribute_not_exists(config.application)' : 'config.application = :app'} AND ${counted === undefined ? 'attribute_not_exists(filter_counted)' : 'filter_counted = :fc'}`,
                ExpressionAttributeValues: { ':id': current.id, ':tf': current.topic_filter, ...(app === undefined ? {} : { ':app': app }), ...(counted === undefined ? {} : { ':fc': counted }) },
              },
            },
            { Delete: { TableName: tableName('meta'), Key: bindingKey(ns, kind, name) } },
            versionBump(ns),
            countResourceOut(ns, kind),
            ...(wasCountedInFilter(current) ? [countBindingOut(ns, current.topic_filter)] : []),
            // `resource_kind`, not `kind`: only resources may appear in the sparse resourcesByKind index.
            { Put: { TableName: tableName('meta'), Item: { ...purgeJobKey(kind, current.id), namespace: ns, resource_kind: kind, id: current.id, deleted_at: now } } },
            ...(extra?.(current) ?? []),
          ] as never,
        },
        { retries: RESOURCE_CONFLICT_RETRIES },
      );
      return current;
    } catch (e) {
      // Deleted and recreated between our read and write: read again.
      if (!isConditionFailed(e)) throw e;
    }
  }
  return undefined;
}
