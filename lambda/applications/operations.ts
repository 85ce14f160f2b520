/**
 * Applications: create, list, get, patch, delete. A delete first marks the application
 * (no webhook can join it from then on, and its portal sessions end), then deletes its webhooks,
 * then the application itself, so a DELETE cut short is finished by the next one.
 */
import { randomUUID } from 'node:crypto';
import { alreadyExists, ApiError } from '../core/rules/errors';
import { applicationNotFound, applicationView, type Application } from './rules';
import { applicationLimitExceeded } from '../core/rules/resource-limits';
import { isoTime } from '../core/rules/envelope';
import { sleep } from '../core/rules/clock';
import { leavesApplication, namespaceCaps } from '../core/storage/resource-limits';
import { createApplication, getApplication, listApplications, markDeleting, removeApplication, replaceApplication } from './storage/applications';
import { listResources } from '../core/storage/resources';
import { deleteResource } from '../core/storage/resource-writes';
import { deleteWebhookStatus } from '../webhooks/storage/webhook-counters';
import type { WebhookItem } from '../webhooks/storage/webhooks';

class NotOurs extends Error {}
const cancelled = (): never => {
  throw new NotOurs();
};

/** The application, or 404 (also while a delete is removing it). */
export async function requireApplication(ns: string, uid: string): Promise<Application> {
  const a = await getApplication(ns, uid);
  if (!a || a.deleting_at !== undefined) throw applicationNotFound(uid);
  return a;
}

export async function createApplicationOp(ns: string, input: { uid: string; name?: string; metadata?: Record<string, string> }, now: number) {
  const a: Application = {
    namespace: ns,
    uid: input.uid,
    ...(input.name !== undefined ? { name: input.name } : {}),
    ...(input.metadata !== undefined ? { metadata: input.metadata } : {}),
    created_at: now,
    updated_at: now,
    version: 1,
    portal_generation: 0,
    incarnation: randomUUID(),
  };
  const limit = (await namespaceCaps(ns)).applications;
  const out = await createApplication(a, limit);
  if (out === 'exists') throw alreadyExists('APPLICATION_ALREADY_EXISTS', `Application ${input.uid}`);
  if (out === 'limit') throw applicationLimitExceeded(limit);
  return applicationView(a);
}

export async function listApplicationsOp(ns: string, limit: number, offset: number) {
  const all = (await listApplications(ns)).filter((a) => a.deleting_at === undefined);
  return { applications: all.slice(offset, offset + limit).map(applicationView), total: all.length, limit, offset };
}

export const getApplicationOp = async (ns: string, uid: string) => applicationView(await requireApplication(ns, uid));

/** Attempts of a PATCH that meets concurrent ones before it answers 409, as for webhooks. */
const PATCH_ATTEMPTS = 8;

export async function patchApplicationOp(ns: string, uid: string, patch: { name?: string | null; metadata?: Record<string, string> | null }, now: number) {
  for (let attempt = 1; ; attempt++) {
    const stored = await requireApplication(ns, uid);
    const next: Application = { ...stored, updated_at: now, version: stored.version + 1 };
    for (const field of ['name', 'metadata'] as const) {
      const v = patch[field];
      if (v === null) delete next[field];
      else if (v !== undefined) (next as unknown as Record<string, unknown>)[field] = v;
    }
    if (await replaceApplication(next)) return applicationView(next);
    if (attempt >= PATCH_ATTEMPTS) throw new ApiError(409, 'CONFLICT', `Application ${uid} is being changed by other requests at the same time; retry.`);
    await sleep(Math.random() * 25 * attempt);
  }
}

/** Deletes the application and every webhook that belongs to it; answers how many webhooks went. */
export async function deleteApplicationOp(ns: string, uid: string, now: number) {
  const marked = await markDeleting(ns, uid, now);
  if (!marked) throw applicationNotFound(uid);
  let deleted = 0;
  // Webhooks cap at 100 a namespace by default; the bound only stops a loop that makes no progress.
  for (let round = 0; ; round++) {
    // Raw items (no secret opened): this function deletes webhooks, it never reads their secrets.
    // Strongly consistent: every webhook write into the application holds only while it is not
    // marked (storage/applications.ts `applicationTakesWebhooks`, checked in the write's own
    // transaction), so each one either committed before the mark above, and this read sees it, or
    // is refused. An eventually consistent Query could miss one committed just before.
    const { items } = await listResources<WebhookItem>(ns, 'WEBHOOK', 100, 0, (w) => w.config?.application === uid, { consistent: true });
    if (items.length === 0) break;
    if (round >= 50) throw new ApiError(503, 'SERVICE_UNAVAILABLE', `Application ${uid} still has webhooks being changed; retry the delete.`, {}, { 'Retry-After': '1' });
    for (const w of items) {
      // Only while it still belongs to the application: one moved or recreated meanwhile for another stays.
      const gone = await deleteResource<WebhookItem>(ns, 'WEBHOOK', w.name, now, (current) => (current.config?.application === uid ? leavesApplication(ns, current) : cancelled())).catch((e: unknown) => {
        if (e instanceof NotOurs) return undefined;
        throw e;
      });
      if (gone) {
        await deleteWebhookStatus(ns, gone.id);
        deleted++;
      }
    }
  }
  await removeApplication(ns, uid);
  return { deleted_at: isoTime(now), webhooks_deleted: deleted };
}
