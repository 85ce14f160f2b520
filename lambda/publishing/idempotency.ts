/**
 * `Idempotency-Key` on publish (DESIGN.md sections 5 and 13), with Powertools idempotency on the
 * `idempotency` table: a retried publish with the same key in the same namespace and topic, within
 * 24 h, returns the first result instead of storing again, with `Idempotent-Replayed: true`.
 * A first request that fails (4xx or 5xx) deletes its record, so the key is not used up; a replay
 * while the first is still in flight answers 409; the same key with another body answers 422.
 */
import { makeIdempotent, IdempotencyConfig } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import {
  IdempotencyAlreadyInProgressError,
  IdempotencyValidationError,
} from '@aws-lambda-powertools/idempotency';
import type { Context } from 'aws-lambda';
import { ApiError } from '../core/rules/errors';
import { dynamoClient, tableName } from '../core/storage/client';

const IDEMPOTENCY_HEADER = 'idempotency-key';
export const REPLAYED_HEADER = 'Idempotent-Replayed';
const WINDOW_SECONDS = 24 * 3600;

interface Keyed<R> {
  /** The namespace, topic and client key together are the idempotency key. */
  scope: [string, string, string];
  body: unknown;
  run: () => Promise<R>;
}

let wrapped: (<R>(input: Keyed<R>) => Promise<{ result: R; replayed?: boolean }>) | undefined;
let idemConfig: IdempotencyConfig | undefined;
/** The client the persistence layer was built on: built again when the clients were reset (storage/client.ts resetClients). */
let builtOn: unknown;

function build() {
  idemConfig = new IdempotencyConfig({
    eventKeyJmesPath: 'scope',
    payloadValidationJmesPath: 'body',
    expiresAfterSeconds: WINDOW_SECONDS,
    responseHook: (response) => ({ ...(response as object), replayed: true }),
  });
  builtOn = dynamoClient();
  const persistenceStore = new DynamoDBPersistenceLayer({ tableName: tableName('idempotency'), awsSdkV3Client: builtOn as never });
  const fn = async (input: Keyed<unknown>) => ({ result: await input.run() });
  wrapped = makeIdempotent(fn, { persistenceStore, config: idemConfig }) as never;
}

/** Validates a client's key: 1 to 255 printable ASCII characters. */
export function idempotencyKeyOf(headers: Record<string, string | undefined>): string | undefined {
  const key = headers[IDEMPOTENCY_HEADER];
  if (key === undefined) return undefined;
  if (!/^[\x21-\x7e]{1,255}$/.test(key)) {
    throw new ApiError(422, 'VALIDATION_ERROR', 'The Idempotency-Key header must be 1 to 255 printable ASCII characters.', {
      fields: [{ field: 'Idempotency-Key', message: 'must be 1 to 255 printable ASCII characters' }],
    });
  }
  return key;
}

/**
 * Runs `run` once per (namespace, topic, key); a replay returns the stored result with
 * `replayed: true`.
 */
export async function once<R>(scope: [string, string, string], body: unknown, context: Context | undefined, run: () => Promise<R>): Promise<{ result: R; replayed: boolean }> {
  if (!wrapped || builtOn !== dynamoClient()) build();
  if (context) idemConfig?.registerLambdaContext(context);
  try {
    const out = await (wrapped as NonNullable<typeof wrapped>)<R>({ scope, body, run });
    return { result: out.result, replayed: out.replayed === true };
  } catch (e) {
    if (e instanceof IdempotencyAlreadyInProgressError) {
      throw new ApiError(409, 'IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is still in progress; retry in a moment.');
    }
    if (e instanceof IdempotencyValidationError) {
      throw new ApiError(422, 'VALIDATION_ERROR', 'This Idempotency-Key was used with a different request body; use a new key for a new message.', {
        fields: [{ field: 'Idempotency-Key', message: 'was used with a different request body' }],
      });
    }
    // Powertools wraps the function's own errors; surface ours unchanged.
    const cause = (e as { cause?: unknown }).cause;
    if (!(e instanceof ApiError) && cause instanceof ApiError) throw cause;
    throw e;
  }
}
