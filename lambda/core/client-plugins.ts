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
type AnyPluggable = Pluggable<any, any>;

const registry: Record<AwsService, AnyPluggable[]> = { dynamodb: [], sqs: [], sfn: [], kms: [] };

/** Adds `plugin` to every client of `service` created from now on. */
export function registerClientPlugin(service: AwsService, plugin: AnyPluggable): void {
  registry[service].push(plugin);
}

/** Applies the plugins registered for `service` to a client just created; returns the client. */
export function withClientPlugins<C extends { middlewareStack: { use(p: AnyPluggable): void } }>(service: AwsService, client: C): C {
  for (const plugin of registry[service]) client.middlewareStack.use(plugin);
  return client;
}
