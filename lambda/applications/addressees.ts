/**
 * The applications a publish addresses (docs/portal.md "Publishing to an application"): checked
 * by the publish endpoint before anything is stored. Apart from ./operations.ts so the publish
 * function loads only what it needs.
 */
import { ApiError } from '../domain/errors';
import { applicationNotFound } from '../domain/applications';
import { getApplication } from '../storage/applications';

/**
 * 404 APPLICATION_NOT_FOUND unless every application a publish addresses exists (docs/portal.md
 * "Publishing to an application"): one strongly consistent GetItem per distinct uid, in parallel,
 * so an application created just before the publish is seen. `uids` is in message order;
 * `batch` names the failing item (`messages.3.application`) in the error's details.
 */
export async function requireAddressees(ns: string, uids: (string | undefined)[], batch: boolean): Promise<void> {
  const distinct = [...new Set(uids.filter((u): u is string => u !== undefined))];
  const missing = new Set<string>();
  await Promise.all(
    distinct.map(async (uid) => {
      const a = await getApplication(ns, uid);
      if (!a || a.deleting_at !== undefined) missing.add(uid);
    }),
  );
  const i = uids.findIndex((u) => u !== undefined && missing.has(u));
  if (i < 0) return;
  const uid = uids[i] as string;
  const e = applicationNotFound(uid);
  throw new ApiError(e.status, e.code, `${e.message} Create it first (POST /applications), or publish without application.`, {
    field: batch ? `messages.${i}.application` : 'application',
    application: uid,
  });
}
