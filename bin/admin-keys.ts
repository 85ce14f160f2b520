/**
 * The admin CLI's key commands: `key create` (printed once; only its SHA-256 hash is stored, and a
 * deployed stack's usage plan gets its twin, bin/admin-usage-plan.ts), `key list`, `key revoke`.
 */
import { mustExist, namespaceArg, table, type Commands } from './admin-command';
import { AdminError } from './admin-target';
import { createKeyTwin, deleteKeyTwins, usagePlanRequests } from './admin-usage-plan';
import { generateApiKey, hashApiKey, KEY_SCOPES, type KeyScope } from '../lambda/core/rules/auth';
import { newId } from '../lambda/core/rules/clock';
import { isoTime } from '../lambda/core/rules/envelope';
import { listApiKeys, putApiKey, revokeApiKey } from '../lambda/namespaces/storage/api-keys';
import { STACK_NAME, USAGE_PLAN_ID_OUTPUT } from '../lib/stack-outputs';

/** Parses `--scopes publish,consume` into known scopes, deduplicated. */
export function parseScopes(raw: string | undefined): KeyScope[] {
  if (!raw) throw new AdminError(`key create needs --scopes: a comma-separated list of ${KEY_SCOPES.join(', ')} (quote '*' in the shell)`, 2);
  const scopes = [...new Set(raw.split(',').map((s) => s.trim()).filter(Boolean))];
  const unknown = scopes.filter((s) => !(KEY_SCOPES as readonly string[]).includes(s));
  if (unknown.length || scopes.length === 0) {
    throw new AdminError(`unknown scope ${unknown.map((s) => `"${s}"`).join(', ') || '""'} in --scopes ${raw}; use a comma-separated list of ${KEY_SCOPES.join(', ')}`, 2);
  }
  return scopes as KeyScope[];
}

export const keyCommands: Commands = {
  async 'key create'({ args: [ns], flags, target, apiGateway, print }) {
    const scopes = parseScopes(flags.scopes);
    const usagePlanId = target.kind === 'aws' ? target.usagePlanId : undefined;
    if (target.kind === 'aws' && !usagePlanId) {
      throw new AdminError(
        "key create against a deployed stack needs the stack's usage plan (API Gateway answers 401 INVALID_API_KEY to a key without its usage-plan key): " +
          'pass --outputs cdk-outputs.json (written by npx cdk deploy --outputs-file cdk-outputs.json, with the UsagePlanId output) or --usage-plan ID ' +
          `(aws cloudformation describe-stacks --stack-name ${STACK_NAME} --query "Stacks[0].Outputs[?OutputKey=='${USAGE_PLAN_ID_OUTPUT}'].OutputValue" --output text)`,
      );
    }
    await mustExist(namespaceArg(ns));
    const key = generateApiKey(ns);
    const rec = { key_id: newId(), namespace: ns, scopes, created_at: Date.now(), ...(flags.description ? { description: flags.description } : {}) };
    // The usage-plan key first: if it cannot be made, nothing is stored and no key is shown.
    const twin = usagePlanId ? await createKeyTwin(apiGateway(), usagePlanId, { keyId: rec.key_id, hash: hashApiKey(key), namespace: ns }) : undefined;
    let stored = false;
    try {
      // A random 192-bit key cannot collide with a stored one; false would mean the impossible.
      stored = await putApiKey(key, rec);
    } finally {
      if (!stored && twin) await apiGateway().send(usagePlanRequests.deleteApiKey(twin)).catch(() => undefined);
    }
    if (!stored) throw new AdminError('a key with the same hash exists already; run the command again');
    print(
      `created key ${rec.key_id} in namespace ${ns} with scopes ${scopes.join(',')}\n` +
        (twin ? `API Gateway key ${twin} (value: the key's SHA-256 hash) added to usage plan ${usagePlanId}\n` : '') +
        `key (shown only now, store it safely; it cannot be shown again): ${key}`,
      {
        key_id: rec.key_id,
        namespace: ns,
        scopes,
        created_at: isoTime(rec.created_at),
        description: rec.description ?? null,
        ...(twin ? { usage_plan: { id: usagePlanId, api_key_id: twin } } : {}),
        key,
      },
    );
  },

  async 'key list'({ args: [ns], print }) {
    await mustExist(namespaceArg(ns));
    const keys = (await listApiKeys(ns)).sort((a, b) => a.created_at - b.created_at);
    // Only these fields: the hash stays in the table (and the key was never stored).
    const shown = keys.map((k) => ({
      key_id: k.key_id,
      scopes: k.scopes,
      created_at: isoTime(k.created_at),
      revoked_at: k.revoked_at ? isoTime(k.revoked_at) : null,
      description: k.description ?? null,
    }));
    const rows = shown.map((k) => [k.key_id, k.scopes.join(','), k.created_at, k.revoked_at ?? '-', k.description ?? '']);
    print(
      shown.length ? table([['KEY ID', 'SCOPES', 'CREATED', 'REVOKED', 'DESCRIPTION'], ...rows]) : `namespace ${ns} has no keys; create one with npm run admin -- key create ${ns} --scopes '*'`,
      shown,
    );
  },

  async 'key revoke'({ args: [ns, keyId], target, apiGateway, print }) {
    await mustExist(namespaceArg(ns));
    const now = Date.now();
    if (!(await revokeApiKey(ns, keyId, now))) {
      throw new AdminError(`namespace ${ns} has no key ${keyId}; list its key ids with npm run admin -- key list ${ns}`);
    }
    // The revocation in the table is what refuses the key; the usage-plan key goes with it.
    const deleted = target.kind === 'aws' ? await deleteKeyTwins(apiGateway(), keyId) : undefined;
    const twinText =
      deleted === undefined ? '' : deleted.length ? `; deleted its API Gateway key ${deleted.join(', ')}` : `; it had no API Gateway key (none named ${keyId})`;
    print(`revoked key ${keyId} of namespace ${ns}; requests with it now answer 401 INVALID_API_KEY${twinText}`, {
      key_id: keyId,
      namespace: ns,
      revoked_at: isoTime(now),
      ...(deleted ? { deleted_api_gateway_keys: deleted } : {}),
    });
  },
};
