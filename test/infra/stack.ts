/**
 * The synthesized stack the infra tests assert on, built once per test file (jest gives every
 * file its own module registry) and exactly as bin/app.ts builds it: same stack, cdk-nag plugin
 * registered on the app. Bundling is skipped (context `aws:cdk:bundling-stacks: []`) so a file
 * synthesizes in about a second; bundles.test.ts bundles for real.
 */
import { App, Stack, Validations, type CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { MessagingStack, type MessagingStackProps } from '../../lib/messaging-stack';
import type { FunctionId } from '../../lib/table-access';

/** An IAM policy statement as the template holds it. */
export interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
}

/** A statement's actions as a list. */
export const actions = (s: Statement) => [s.Action].flat();

export interface Synthesized {
  app: App;
  stack: MessagingStack;
  template: Template;
  /** Logical id of a construct's CloudFormation resource (its default child). */
  logicalId(c: IConstruct): string;
  /** Every policy statement attached to the role of function `id`. */
  statementsOf(id: FunctionId): Statement[];
}

export function synthesize(
  props: MessagingStackProps = {},
  { context = {}, cfnValidation = false }: { context?: Record<string, unknown>; cfnValidation?: boolean } = {},
): Synthesized {
  // The built-in CloudFormation schema validation (WebAssembly, ~10 s of CPU) runs once, in
  // nag.test.ts; the other files skip it.
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [], ...context }, builtinCloudFormationValidation: cfnValidation });
  const stack = new MessagingStack(app, 'Messaging', props);
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
  const template = Template.fromStack(stack);
  const logicalId = (c: IConstruct) => Stack.of(c).getLogicalId((c.node.defaultChild ?? c) as CfnElement);
  const resources = template.toJSON().Resources as Record<string, { Type: string; Properties: any }>;
  const statementsOf = (id: FunctionId): Statement[] => {
    const roleId = resources[logicalId(stack.functions.all.get(id)!)].Properties.Role['Fn::GetAtt'][0];
    return Object.values(resources)
      .filter((r) => r.Type === 'AWS::IAM::Policy' && r.Properties.Roles.some((x: { Ref: string }) => x.Ref === roleId))
      .flatMap((r) => r.Properties.PolicyDocument.Statement as Statement[]);
  };
  return { app, stack, template, logicalId, statementsOf };
}

let cached: Synthesized | undefined;
/** The default stack, synthesized on first use in this test file. */
export const defaultStack = (): Synthesized => (cached ??= synthesize());

/**
 * CDK's own deploy-time function behind the console's BucketDeployment (lib/constructs/console.ts):
 * it copies the console files during `cdk deploy` and serves no request, so the assertions about
 * the service's functions (tracing, alarms, dashboard, shared settings) leave it out.
 */
export const isCdkDeployFunction = (logicalIdOrPath: string) => /Custom(::)?CDKBucketDeployment/.test(logicalIdOrPath);

/** The template's Lambda functions of the service: every one but CDK's deploy-time function. */
export function serviceFunctionResources(template: Template): Record<string, any> {
  return Object.fromEntries(Object.entries(template.findResources('AWS::Lambda::Function')).filter(([id]) => !isCdkDeployFunction(id)));
}
