/**
 * `npm run preflight`: checks, with your AWS credentials and without changing anything, what would
 * fail `npx cdk deploy` in this account and region, and prints a checklist that says what to do
 * (bin/preflight-checks.ts). Reads the same CDK context as the deploy (cdk.json's `context`, then
 * `-c key=value`), so it checks the deploy you are about to run.
 *
 * Exit status: 0 when nothing would fail the deploy (warnings included), 1 when something would,
 * 2 on a usage error.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { stackNameFor, stackPropsFromContext } from '../lib/deployment';
import { formatReport, preflightClients, runPreflight } from './preflight-checks';
import type { PreflightSettings } from './preflight-types';

export const USAGE = `Usage: npm run preflight -- [options]

Checks, read-only, what would fail "npx cdk deploy" in the account and region of your AWS
credentials: CDK bootstrap, the stack's state, Lambda concurrency, the API Gateway logging role,
the hosted zone of a custom domain, the alarm email; then lists the quotas that matter.

Options:
  -c, --context KEY=VALUE  a deployment setting, as for cdk deploy (README "Deployment settings");
                           repeatable, e.g. -c environment=dev -c alarmEmail=ops@example.com
  --profile NAME           AWS profile (default: AWS_PROFILE or the default profile)
  --region REGION          AWS region (default: AWS_REGION or the profile's region)
  -h, --help               this help
`;

/** The CDK context the deploy would see: cdk.json's, then each `-c key=value` over it. */
export function deployContext(cdkJson: { context?: Record<string, unknown> }, pairs: string[]): Record<string, unknown> {
  const context: Record<string, unknown> = { ...(cdkJson.context ?? {}) };
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq < 1) throw new Error(`-c takes KEY=VALUE, got ${pair}`);
    context[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return context;
}

/** What the deploy will do, from its context (the same rules as bin/app.ts). */
export function settingsFromContext(context: Record<string, unknown>): PreflightSettings {
  const props = stackPropsFromContext((k) => context[k]);
  const environmentName = props.environmentName ?? 'production';
  const qualifier = context['@aws-cdk/core:bootstrapQualifier'];
  return {
    stackName: stackNameFor(environmentName),
    environmentName,
    ...(typeof qualifier === 'string' && qualifier ? { qualifier } : {}),
    apiGatewayCloudWatchRole: props.apiGatewayCloudWatchRole,
    sweeperReservedConcurrency: props.sweeperReservedConcurrency,
    ...(props.webhookDeliveryConcurrency !== undefined ? { webhookDeliveryConcurrency: props.webhookDeliveryConcurrency } : {}),
    tableDeletionProtection: props.tableDeletionProtection,
    customDomain: props.customDomain,
    alarmEmail: props.alarmEmail,
  };
}

async function main(argv: string[]): Promise<number> {
  let values: { context?: string[]; profile?: string; region?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        context: { type: 'string', short: 'c', multiple: true },
        profile: { type: 'string' },
        region: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  let settings: PreflightSettings;
  try {
    const cdkJson = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'cdk.json'), 'utf8')) as { context?: Record<string, unknown> };
    settings = settingsFromContext(deployContext(cdkJson, values.context ?? []));
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n\nFix the setting (README "Deployment settings") and run npm run preflight again.\n`);
    return 2;
  }
  const report = await runPreflight(settings, preflightClients({ region: values.region, profile: values.profile }));
  process.stdout.write(formatReport(report, settings));
  return report.checks.some((c) => c.status === 'fail') ? 1 : 0;
}

if (process.argv[1] && /preflight\.ts$/.test(process.argv[1])) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e: Error) => {
      process.stderr.write(`preflight stopped on an unexpected error: ${e.stack ?? e.message}\n`);
      process.exit(1);
    },
  );
}
