/**
 * The page size of the console's member listings (consumer groups, subscribers) (docs/console.md).
 */
import { invalidRequest, validationError } from '../core/rules/errors';

/** Members listed per answer (groups, subscribers): one DynamoDB Query page. */
export const MEMBER_LIMIT = { default: 50, max: 100 } as const;

/** `limit` of a member listing: not an integer 400, out of range 422 (as the delivery log's). */
export function memberLimit(raw: string | undefined): number {
  if (raw === undefined) return MEMBER_LIMIT.default;
  if (!/^-?\d+$/.test(raw)) throw invalidRequest('Query parameter "limit" must be an integer.', { fields: [{ field: 'limit', message: 'must be an integer' }] });
  const n = Number(raw);
  if (n < 1 || n > MEMBER_LIMIT.max) throw validationError([{ field: 'limit', message: `must be between 1 and ${MEMBER_LIMIT.max}` }]);
  return n;
}

