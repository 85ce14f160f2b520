/**
 * The CDK app: the messaging stack, checked by cdk-nag's AwsSolutions pack at every synth.
 * Environment-agnostic (no account or region), so `npx cdk synth` needs no AWS credentials;
 * `cdk deploy` takes the account and region of the caller's credentials.
 * Deployment settings come from the CDK context (cdk.json `context` or `-c key=value`): environment,
 * domainName + hostedZoneId + zoneName, logRetentionDays, removalPolicy, alarmEmail (see
 * lib/deployment.ts and README "Deploy to AWS").
 */
import { App, Tags, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { MessagingStack } from '../lib/messaging-stack';
import { stackNameFor, stackPropsFromContext } from '../lib/deployment';

const app = new App();
const props = stackPropsFromContext((key) => app.node.tryGetContext(key));
new MessagingStack(app, stackNameFor(props.environmentName), props);
if (props.environmentName) Tags.of(app).add('environment', props.environmentName);
Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
