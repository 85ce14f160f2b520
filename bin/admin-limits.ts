/**
 * The admin CLI's limit commands: a namespace's request and fan-out limits per minute (`limits`),
 * its schedule limit, its resource limits and its webhooks' health thresholds.
 */
import { mustExist, namespaceArg, type Commands } from './admin-command';
import { AdminError } from './admin-target';
import { DEFAULT_LIMITS, DEFAULT_PORTAL_LIMIT } from '../lambda/core/rules/rate-limits';
import { DEFAULT_FANOUT_LIMIT } from '../lambda/core/rules/fanout-writes';
import { setNamespaceLimits, type Limits } from '../lambda/namespaces/storage/namespaces';

export const LIMIT_FLAGS = ['publish', 'consume', 'management', 'fanout', 'portal'] as const;
type LimitFlag = (typeof LIMIT_FLAGS)[number];
/**
 * Defaults per minute: requests by category, `fanout` writes (lambda/core/rules/fanout-writes.ts) and
 * `portal` requests of each application's portal sessions (lambda/core/rules/rate-limits.ts).
 */
const LIMIT_DEFAULTS: Record<LimitFlag, number> = { ...DEFAULT_LIMITS, fanout: DEFAULT_FANOUT_LIMIT, portal: DEFAULT_PORTAL_LIMIT };
const UNIT: Partial<Record<LimitFlag, string>> = { fanout: ' writes', portal: ' per application' };

/** Reads `--publish/--consume/--management/--fanout/--portal` as positive integers; undefined when none is given. */
export function parseLimits(flags: Partial<Record<LimitFlag, string>>): Limits | undefined {
  const limits: Limits = {};
  for (const cat of LIMIT_FLAGS) {
    const raw = flags[cat];
    if (raw === undefined) continue;
    const n = Number(raw);
    if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n) || n < 1) {
      throw new AdminError(`--${cat} ${raw} is not a limit: give a whole number of ${cat === 'fanout' ? 'writes' : 'requests'} per minute, 1 or more`, 2);
    }
    limits[cat] = n;
  }
  return Object.keys(limits).length ? limits : undefined;
}

export const effectiveLimits = (limits: Limits = {}) =>
  Object.fromEntries(LIMIT_FLAGS.map((c) => [c, { limit: limits[c] ?? LIMIT_DEFAULTS[c], default: limits[c] === undefined }]));
export const limitsText = (limits?: Limits) =>
  LIMIT_FLAGS.map((c) => `${c} ${limits?.[c] ?? `${LIMIT_DEFAULTS[c]} (default)`}${UNIT[c] ?? ''}`).join(', ');

export const limitCommands: Commands = {
  async 'limits set'({ args: [ns], flags, print }) {
    const limits = parseLimits(flags);
    if (!limits) throw new AdminError('limits set needs at least one of --publish N, --consume N, --management N (requests per minute), --fanout N (writes per minute), --portal N (requests per minute of each application\'s portal sessions)', 2);
    await mustExist(namespaceArg(ns));
    const updated = await setNamespaceLimits(ns, limits);
    print(`limits of ${ns} per minute: ${limitsText(updated.limits)}`, { namespace: ns, limits: effectiveLimits(updated.limits) });
  },

  async 'limits get'({ args: [ns], print }) {
    const rec = await mustExist(namespaceArg(ns));
    print(`limits of ${ns} per minute: ${limitsText(rec.limits)}`, { namespace: ns, limits: effectiveLimits(rec.limits) });
  },

  async 'schedule-limit set'({ args: [ns, raw], print }) {
    const n = Number(raw);
    if (!/^\d+$/.test(raw ?? '') || !Number.isSafeInteger(n)) throw new AdminError(`${raw} is not a schedule limit: give a whole number of schedules, 0 or more`, 2);
    await mustExist(namespaceArg(ns));
    const { setScheduleLimit, scheduleCount } = await import('../lambda/schedules/storage/schedules');
    await setScheduleLimit(ns, n);
    const count = await scheduleCount(ns);
    print(`schedule limit of ${ns}: ${n} (it has ${count}; existing schedules stay, creates beyond the limit answer 409)`, { namespace: ns, schedule_limit: n, schedules: count });
  },

  async 'schedule-limit get'({ args: [ns], print }) {
    await mustExist(namespaceArg(ns));
    const { scheduleLimit, scheduleCount } = await import('../lambda/schedules/storage/schedules');
    const [limit, count] = await Promise.all([scheduleLimit(ns), scheduleCount(ns)]);
    print(`schedule limit of ${ns}: ${limit} (it has ${count})`, { namespace: ns, schedule_limit: limit, schedules: count });
  },

  async 'resource-limit set'({ args: [ns, what, raw], print }) {
    const { LIMIT_NAMES } = await import('../lambda/core/rules/resource-limits');
    const name = LIMIT_NAMES.find((n) => n === what);
    if (!name) throw new AdminError(`${what} is not a resource limit: give one of ${LIMIT_NAMES.join(', ')}`, 2);
    const n = Number(raw);
    if (!/^\d+$/.test(raw ?? '') || !Number.isSafeInteger(n)) throw new AdminError(`${raw} is not a limit: give a whole number, 0 or more`, 2);
    await mustExist(namespaceArg(ns));
    const { setNamespaceCap } = await import('../lambda/core/storage/resource-limits');
    await setNamespaceCap(ns, name, n);
    print(`${name} limit of ${ns}: ${n} (existing resources stay; creates beyond it answer 409 LIMIT_EXCEEDED)`, { namespace: ns, limit: name, value: n });
  },

  async 'resource-limit get'({ args: [ns], print }) {
    await mustExist(namespaceArg(ns));
    const { DEFAULT_LIMITS, KIND_OF_LIMIT } = await import('../lambda/core/rules/resource-limits');
    const { namespaceCaps, resourceCount } = await import('../lambda/core/storage/resource-limits');
    const { heldUsage } = await import('../lambda/limits/storage/held-quota');
    const [caps, held] = await Promise.all([namespaceCaps(ns), heldUsage(ns)]);
    const kinds = Object.entries(KIND_OF_LIMIT);
    const counts: Record<string, number> = Object.fromEntries(await Promise.all(kinds.map(async ([name, kind]) => [name, await resourceCount(ns, kind)] as const)));
    counts['event-types'] = await (await import('../lambda/catalog/storage/event-types')).eventTypeCount(ns);
    const { applicationCount } = await import('../lambda/applications/storage/applications');
    counts.applications = await applicationCount(ns);
    const holds: Record<string, number> = { 'held-messages': held.messages, 'held-bytes': held.bytes };
    const lines = Object.entries(caps).map(([name, limit]) => {
      const n = counts[name] ?? holds[name];
      const has = n !== undefined ? `, it ${name in holds ? 'holds' : 'has'} ${n}` : '';
      return `  ${name}: ${limit}${limit === DEFAULT_LIMITS[name as keyof typeof DEFAULT_LIMITS] ? ' (default)' : ''}${has}`;
    });
    print(`resource limits of ${ns}:\n${lines.join('\n')}`, { namespace: ns, limits: caps, counts, held });
  },

  async 'webhook-health set'({ args: [ns, what, raw], print }) {
    const { HEALTH_FIELDS, LIMIT_BOUNDS } = await import('../lambda/webhooks/rules/endpoint-health');
    const field = HEALTH_FIELDS.find((f) => f === what);
    if (!field) throw new AdminError(`${what} is not a webhook health threshold: give one of ${HEALTH_FIELDS.join(', ')}`, 2);
    const [min, max] = LIMIT_BOUNDS[field];
    const n = Number(raw);
    if (raw !== 'default' && (!/^\d+$/.test(raw ?? '') || n < min || n > max)) {
      throw new AdminError(`${raw} is not a ${field}: give a whole number from ${min} to ${max}, or "default" to remove the namespace's own value`, 2);
    }
    await mustExist(namespaceArg(ns));
    const { setNamespaceHealthDefault } = await import('../lambda/webhooks/storage/webhook-health');
    const value = raw === 'default' ? null : n;
    await setNamespaceHealthDefault(ns, field, value);
    print(
      value === null
        ? `${field} of ${ns}'s webhooks: the service's default again (webhooks that set their own keep it)`
        : `${field} of ${ns}'s webhooks: ${value} (webhooks that set their own keep it; running deliveries see it within 30 s)`,
      { namespace: ns, field, value },
    );
  },

  async 'webhook-health get'({ args: [ns], print }) {
    await mustExist(namespaceArg(ns));
    const { effectiveHealth } = await import('../lambda/webhooks/rules/endpoint-health');
    const { namespaceHealthDefaults } = await import('../lambda/webhooks/storage/webhook-health');
    const own = await namespaceHealthDefaults(ns);
    const eff = effectiveHealth({}, own);
    const lines = Object.entries(eff).map(([f, e]) => `  ${f}: ${e.value}${e.source === 'default' ? ' (default)' : ''}`);
    print(`webhook health thresholds of ${ns} (for webhooks that set none):\n${lines.join('\n')}`, {
      namespace: ns,
      thresholds: Object.fromEntries(Object.entries(eff).map(([f, e]) => [f, e.value])),
      sources: Object.fromEntries(Object.entries(eff).map(([f, e]) => [f, e.source])),
    });
  },
};
