/**
 * Seeding of namespaces, keys and limits at start (DESIGN.md section 12), idempotent: a namespace or
 * key that exists is left as it is; limits given in the file are applied.
 */
import { readFileSync } from 'node:fs';
import * as z from 'zod';
import { createNamespace, setNamespaceLimits } from '../lambda/namespaces/storage/namespaces';
import { putApiKey } from '../lambda/namespaces/storage/api-keys';
import { hashApiKey, KEY_SCOPES, NAMESPACE_NAME } from '../lambda/core/rules/auth';

const limitsSchema = z
  .object({ publish: z.int().positive(), consume: z.int().positive(), management: z.int().positive(), fanout: z.int().positive(), portal: z.int().positive() })
  .partial();

const seedSchema = z.object({
  namespaces: z.array(
    z.object({
      name: z.string().regex(NAMESPACE_NAME, 'must be a lowercase DNS label'),
      limits: limitsSchema.optional(),
      keys: z.array(z.object({ key: z.string().min(8), scopes: z.array(z.enum(KEY_SCOPES)).min(1) })).default([]),
    }),
  ),
});
export type Seed = z.infer<typeof seedSchema>;

/** Without MSG_SEED_FILE: namespace `dev` with the key `dev-key` (scope `*`). */
export const DEFAULT_SEED: Seed = { namespaces: [{ name: 'dev', keys: [{ key: 'dev-key', scopes: ['*'] }] }] };

export function readSeedFile(path: string): Seed {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new Error(`MSG_SEED_FILE=${path} could not be read as JSON (${(e as Error).message}); fix the file or unset MSG_SEED_FILE`);
  }
  const parsed = seedSchema.safeParse(json);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new Error(`MSG_SEED_FILE=${path}: ${first.path.join('.')} ${first.message}; see README "Seed file"`);
  }
  return parsed.data;
}

export async function applySeed(seed: Seed, now = Date.now()): Promise<void> {
  for (const ns of seed.namespaces) {
    await createNamespace(ns.name, now, ns.limits);
    if (ns.limits && Object.keys(ns.limits).length > 0) await setNamespaceLimits(ns.name, ns.limits);
    for (const k of ns.keys) {
      // The seed's key id is derived from its hash, so reseeding finds the same key.
      await putApiKey(k.key, { key_id: `seed-${hashApiKey(k.key).slice(0, 12)}`, namespace: ns.name, scopes: k.scopes, created_at: now });
    }
  }
}
