/**
 * The CDK app: the messaging stack, checked by cdk-nag's AwsSolutions pack at every synth.
 * Environment-agnostic (no account or region), so `npx cdk synth` needs no AWS credentials;
 * `cdk deploy` takes the account and region of the caller's credentials.
 * Optional context: `-c baseDomain=example.com` (per-namespace hosts `{ns}.example.com`).
 */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { MessagingStack } from '../lib/messaging-stack';
import { STACK_NAME } from '../lib/stack-outputs';

const app = new App();
new MessagingStack(app, STACK_NAME, { baseDomain: app.node.tryGetContext('baseDomain') });
Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
