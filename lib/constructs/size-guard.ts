/**
 * The size guard: an AWS WAF web ACL on the API stage whose one rule blocks a
 * request with a `Content-Length` of SIZE_GUARD_REFUSED_BYTES (3,000,000) or more, answering 413
 * MESSAGE_TOO_LARGE in the envelope. Without it a body of about 6 to 10 MB fails the Lambda
 * invoke and API Gateway answers with its own 5xx, which clients would retry.
 *
 * - WAF protects a REST API stage and evaluates before API Gateway's authorizer and usage plan
 *   (https://docs.aws.amazon.com/apigateway/latest/developerguide/apigateway-control-access-aws-waf.html).
 * - A custom response sets the status and a body with its content type
 *   (https://docs.aws.amazon.com/waf/latest/developerguide/customizing-the-response-for-blocked-requests.html).
 * - The rule reads a single header, which WAF matches by name case-insensitively; a size
 *   constraint on that header would measure the length of its text (digits), not the number, so
 *   the rule is a regex on the digits, the same pattern the local gateway tests
 *   (lambda/core/rules/gateway-responses.ts).
 * - A request without Content-Length (chunked) is not matched: WAF cannot size a body it only
 *   inspects the first 16 KB of. Such a body above the invoke limit still gets API Gateway's 500.
 *
 * Cost (us-east-1 list prices): $5 per web ACL and $1 per rule a month, $0.60 per million
 * requests inspected (https://aws.amazon.com/waf/pricing/). Context `sizeGuard=false` leaves it out.
 */
import type { Stage } from 'aws-cdk-lib/aws-apigateway';
import { CfnWebACL, CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { GATEWAY_ANSWERS, gatewayAnswerBody, SIZE_GUARD_CONTENT_LENGTH_PATTERN } from '../../lambda/core/rules/gateway-responses';

export const SIZE_GUARD_BODY_KEY = 'message-too-large';
export const SIZE_GUARD_RULE = 'BodyAboveLambdaInvokeLimit';

export interface SizeGuardProps {
  /** The stage the web ACL protects. */
  readonly stage: Stage;
}

export class SizeGuard extends Construct {
  readonly webAcl: CfnWebACL;

  constructor(scope: Construct, id: string, props: SizeGuardProps) {
    super(scope, id);
    const visibility = (metricName: string) => ({ cloudWatchMetricsEnabled: true, metricName, sampledRequestsEnabled: false });
    this.webAcl = new CfnWebACL(this, 'WebAcl', {
      scope: 'REGIONAL',
      description: 'Size guard of the messaging API: 413 for a Content-Length of 3,000,000 bytes or more',
      defaultAction: { allow: {} },
      visibilityConfig: visibility('MessagingSizeGuard'),
      customResponseBodies: {
        [SIZE_GUARD_BODY_KEY]: { contentType: 'APPLICATION_JSON', content: gatewayAnswerBody(GATEWAY_ANSWERS.sizeGuard) },
      },
      rules: [
        {
          name: SIZE_GUARD_RULE,
          priority: 0,
          statement: {
            regexMatchStatement: {
              regexString: SIZE_GUARD_CONTENT_LENGTH_PATTERN,
              fieldToMatch: { singleHeader: { Name: 'content-length' } },
              textTransformations: [{ priority: 0, type: 'NONE' }],
            },
          },
          action: { block: { customResponse: { responseCode: GATEWAY_ANSWERS.sizeGuard.status, customResponseBodyKey: SIZE_GUARD_BODY_KEY } } },
          visibilityConfig: visibility('MessagingSizeGuardBlocked'),
        },
      ],
    });
    const association = new CfnWebACLAssociation(this, 'Association', { resourceArn: props.stage.stageArn, webAclArn: this.webAcl.attrArn });
    // The stage ARN refers to the stage (its name is the stage's Ref), so the association is
    // created after the stage; the explicit dependency keeps it so if that ever changes.
    association.node.addDependency(props.stage);
  }
}
