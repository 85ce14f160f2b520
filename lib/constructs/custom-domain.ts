/**
 * The API on the operator's own domain, with one host per namespace (DESIGN.md section 2, the
 * Host rule): `api.example.com` and `{ns}.api.example.com` both reach the API at `/api/v1`.
 *
 * - One ACM certificate for the name and its wildcard, validated through DNS in the given
 *   Route 53 hosted zone (CloudFormation waits for the validation records it creates there).
 * - Two regional API Gateway custom domain names (the name and `*.name`), TLS 1.2, each mapping
 *   the base path `api` to the API's stage, so URLs keep the `/api/v1` of the execute-api URL.
 * - Route 53 alias records for both.
 *
 * The hosted zone is given by id and name (no lookup), so `cdk synth` needs no AWS credentials.
 */
import { DomainName, EndpointType, SecurityPolicy, type RestApi } from 'aws-cdk-lib/aws-apigateway';
import { Certificate, CertificateValidation } from 'aws-cdk-lib/aws-certificatemanager';
import { ARecord, HostedZone, RecordTarget } from 'aws-cdk-lib/aws-route53';
import { ApiGatewayDomain } from 'aws-cdk-lib/aws-route53-targets';
import { Construct } from 'constructs';
import { API_STAGE } from '../../lambda/core/rules/routes';

export interface CustomDomainProps {
  /** The API's name, e.g. `api.example.com`; namespaces get `{ns}.api.example.com`. */
  readonly domainName: string;
  /** Route 53 hosted zone that holds `domainName` (e.g. the zone of `example.com`). */
  readonly hostedZoneId: string;
  /** That zone's name, e.g. `example.com`. */
  readonly zoneName: string;
}

const normalize = (name: string) => name.toLowerCase().replace(/\.$/, '');

/**
 * What the functions need to know of the domain (MSG_BASE_DOMAIN, MSG_ENDPOINT_TEMPLATE), known
 * before the domain's resources exist.
 */
export function namespaceHosts(domainName: string): { baseDomain: string; endpointTemplate: string } {
  const name = normalize(domainName);
  return { baseDomain: name, endpointTemplate: `https://{namespace}.${name}/${API_STAGE}/v1` };
}

export class CustomDomain extends Construct {
  readonly certificate: Certificate;
  readonly domains: DomainName[];
  /** MSG_BASE_DOMAIN of the functions. */
  readonly baseDomain: string;
  /** MSG_ENDPOINT_TEMPLATE of the functions (`GET /namespace` answers it). */
  readonly endpointTemplate: string;

  constructor(scope: Construct, id: string, props: CustomDomainProps & { restApi: RestApi }) {
    super(scope, id);
    const name = normalize(props.domainName);
    const zoneName = normalize(props.zoneName);
    if (name !== zoneName && !name.endsWith(`.${zoneName}`)) {
      throw new Error(`domainName ${name} is not in the hosted zone ${zoneName}`);
    }
    ({ baseDomain: this.baseDomain, endpointTemplate: this.endpointTemplate } = namespaceHosts(name));
    const zone = HostedZone.fromHostedZoneAttributes(this, 'Zone', { hostedZoneId: props.hostedZoneId, zoneName });
    this.certificate = new Certificate(this, 'Certificate', {
      domainName: name,
      subjectAlternativeNames: [`*.${name}`],
      validation: CertificateValidation.fromDns(zone),
    });
    this.domains = [
      { id: 'Domain', host: name },
      { id: 'WildcardDomain', host: `*.${name}` },
    ].map(({ id: domainId, host }) => {
      const domain = new DomainName(this, domainId, {
        domainName: host,
        certificate: this.certificate,
        endpointType: EndpointType.REGIONAL,
        securityPolicy: SecurityPolicy.TLS_1_2,
      });
      domain.addBasePathMapping(props.restApi, { basePath: API_STAGE, stage: props.restApi.deploymentStage });
      new ARecord(this, `${domainId}Alias`, {
        zone,
        recordName: host,
        target: RecordTarget.fromAlias(new ApiGatewayDomain(domain)),
      });
      return domain;
    });
  }
}
