/**
 * The applications a publish addresses (docs/portal.md "Publishing to an application"): checked
 * by the publish endpoint before anything is stored. Apart from ./operations.ts so the publish
 * function loads only what it needs (its bundle has a size budget: test/infra/bundles.test.ts).
 */
import { ApiError } from '../core/rules/errors';
import { getApplication } from './storage/applications';

/**
 * 404 APPLICATION_NOT_FOUND unless every application a publish addresses exists (docs/portal.md
 * "Publishing to an application"): one strongly consistent GetItem per distinct uid, in parallel,
 * so an application created just before the publish is seen. `uids` is in message order;
 * `batch` names the failing item (`messages.3.application`) in the error's details.
 */
export async function requireAddressees(ns: string, uids: (string | undefined)[], batch: boolean): Promise<void> {
  const exists = new Map<string, boolean>();
  await Promise.all(
    [...new Set(uids)].map(async (uid) => {
      if (uid === undefined) return;
      const a = await getApplication(ns, uid);
      exists.set(uid, a !== undefined && a.deleting_at === undefined);
    }),
  );
  const i = uids.findIndex((u) => u !== undefined && !exists.get(u));
  // Not ../domain/applications' applicationNotFound: its request schemas would weigh on the publish bundle.
  if (i >= 0) throw new ApiError(404, 'APPLICATION_NOT_FOUND', `Application ${uids[i]} does not exist.`, { field: batch ? `messages.${i}.application` : 'application' });
}
