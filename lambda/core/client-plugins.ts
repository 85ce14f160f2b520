/**
 * Plugins every AWS SDK client of this code base is created with, per service. Empty in AWS.
 *
 * The local runtime and the tests register here what makes the local engines behave like AWS
 * where AWS is less kind than DynamoDB Local or fauxqs (local/aws-harsh/), and the fault suite
 * its injector: both act on the SDK's own middleware stack, so the service code never knows.
 * Register before the first client is created (clients are built once per container).
 */
import type { Pluggable } from '@smithy/types';

export type AwsService = 'dynamodb' | 'sqs' | 'sfn' | 'kms';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyPluggable = Pluggable<any, any>;

const registry: Record<AwsService, AnyPluggable[]> = { dynamodb: [], sqs: [], sfn: [], kms: [] };

/** Adds `plugin` to every client of `service` created from now on. */
export function registerClientPlugin(service: AwsService, plugin: AnyPluggable): void {
  registry[service].push(plugin);
}

/**
 * Applies the plugins registered for `service` to a client just created; returns the client.
 *
 * It also removes the SDK's logger middleware (`loggerMiddleware`, @aws-sdk/core), which after
 * every call builds a redacted copy of the command's input and output for the client's `logger`
 * before calling it, even when that logger is the default one that discards everything: a walk of
 * every item a Query or BatchGet returned, for nothing. Measured: 18 % of the sampled CPU in a
 * profile of a read-heavy test case (concurrent log readers), 4 to 7 % of a whole publish-heavy
 * test file's (logs-reservations: 28.3 s of CPU before, 26.3 and 27.4 s after). The service logs with
 * Powertools (lambda/core/observability.ts) and sets no SDK logger, so nothing is lost; the same CPU is
 * saved in each Lambda invocation.
 */
export function withClientPlugins<C extends { middlewareStack: { use(p: AnyPluggable): void; remove(name: string): boolean } }>(service: AwsService, client: C): C {
  client.middlewareStack.remove('loggerMiddleware');
  for (const plugin of registry[service]) client.middlewareStack.use(plugin);
  return client;
}
