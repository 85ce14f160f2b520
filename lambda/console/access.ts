/**
 * `GET /namespace/access`: the calling key's scopes and the namespace's rate-limit headroom per category, read without counting (docs/console.md).
 */
import type { RateCategory } from '../core/rules/routes';

const RATE_CATEGORIES: readonly RateCategory[] = ['publish', 'consume', 'management'];

interface Headroom {
  category: RateCategory;
  limit: number;
  remaining: number;
  reset: number;
}

/** The key's scopes and each category's state in the current minute, read without counting. */
export async function accessOf(
  keyId: string,
  scopes: string[],
  namespace: string,
  peek: (ns: string, c: RateCategory) => Promise<Record<string, string>>,
) {
  const rate_limits: Headroom[] = await Promise.all(
    RATE_CATEGORIES.map(async (category) => {
      const h = await peek(namespace, category);
      return { category, limit: Number(h['X-RateLimit-Limit']), remaining: Number(h['X-RateLimit-Remaining']), reset: Number(h['X-RateLimit-Reset']) };
    }),
  );
  return { namespace, key_id: keyId, scopes, rate_limits };
}

