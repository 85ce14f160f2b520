/**
 * cdk-nag (AwsSolutions) finds nothing unacknowledged, and every acknowledgment answers a finding
 * that really exists where it is placed (no stale or blanket acknowledgments). cdk-nag 3 runs as
 * a CDK policy-validation plugin: synthesis fails on a finding, and acknowledgments are
 * `Validations.of(construct).acknowledge({ id, reason })`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { synthesize } from './stack';

// This file also runs CDK's built-in CloudFormation schema validation, like `cdk synth` does.
const { app, stack } = synthesize({}, { cfnValidation: true });

interface Violation {
  ruleName: string;
  severity: string;
  violatingResources: { constructPath: string }[];
}

describe('cdk-nag AwsSolutions', () => {
  it('reports no unacknowledged error or warning', () => {
    const { violations } = new AwsSolutionsChecks(app, { verbose: true }).validateScope(stack);
    expect(violations.map((v) => `${v.severity} ${v.ruleName}: ${v.violatingResources.map((r) => r.constructPath).join(', ')}`)).toEqual([]);
  });

  it('lets the app synthesize with the plugin registered, and the report lists no violation', () => {
    const assembly = app.synth();
    const report = JSON.parse(readFileSync(join(assembly.directory, 'validation-report.json'), 'utf8')) as {
      pluginReports: { pluginName: string; violations?: unknown[] }[];
    };
    expect(report.pluginReports.filter((r) => (r.violations ?? []).length > 0)).toEqual([]);
  });

  it('acknowledges only findings that exist on the acknowledged construct or below it, each with a reason', () => {
    const raw = new AwsSolutionsChecks(app);
    // The same checks with every acknowledgment ignored.
    (raw as unknown as { isAcknowledged: () => boolean }).isAcknowledged = () => false;
    const findings = (raw.validateScope(stack).violations as Violation[]).flatMap((v) =>
      v.violatingResources.map((r) => ({ id: v.ruleName, path: r.constructPath })),
    );
    const acks = stack.node.findAll().flatMap((c) =>
      c.node.metadata
        .filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
        .flatMap((m) => Object.entries(m.data as Record<string, string>))
        .map(([key, reason]) => ({ path: c.node.path, id: key.replace(/^annotation::/i, ''), reason })),
    );
    expect(acks.length).toBeGreaterThan(0);
    for (const ack of acks) {
      const answered = findings.some((f) => f.id === ack.id && (f.path === ack.path || f.path.startsWith(`${ack.path}/`)));
      expect({ ...ack, answered }).toEqual({ ...ack, answered: true });
      expect(ack.reason.length).toBeGreaterThan(40);
    }
  });
});
