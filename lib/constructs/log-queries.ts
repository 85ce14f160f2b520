/**
 * Saved CloudWatch Logs Insights queries (AWS::Logs::QueryDefinition): the questions the README's
 * "Operate" section answers from the logs, ready under Logs Insights → Queries → `{stack}/...`
 * with their log groups selected, instead of typed by hand.
 *
 * The fields are those the functions write: Powertools JSON logs (`level`, `message`,
 * `function_request_id`, plus `namespace` and `route` once a request is authorized), the EMF
 * metric lines (a metric's name as a field, the tenant's `namespace` beside it, see
 * lambda/core/observability.ts), and the API's access log (lib/constructs/api.ts ACCESS_LOG_FORMAT).
 */
import { Stack } from 'aws-cdk-lib';
import { QueryDefinition, QueryString, type ILogGroup } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { METRIC } from '../../lambda/core/rules/metric-names';

/** The queries, by the name they are saved under (after `{stack}/`). */
export const LOG_QUERIES = {
  unexpectedErrors: {
    title: 'Unexpected errors (newest first)',
    logs: 'functions',
    query: new QueryString({
      fields: ['@timestamp', '@log', 'function_request_id', 'namespace', 'route', 'message', 'error.message'],
      filterStatements: ['level = "ERROR"'],
      sort: '@timestamp desc',
      limit: 100,
    }),
  },
  publishedByNamespace: {
    title: 'Messages published by namespace',
    logs: 'functions',
    query: new QueryString({
      filterStatements: [`ispresent(${METRIC.published})`],
      statsStatements: [`sum(${METRIC.published}) as published by namespace`],
      sort: 'published desc',
    }),
  },
  rateLimitedByNamespace: {
    title: 'Requests refused with 429 by namespace and category',
    logs: 'functions',
    query: new QueryString({
      filterStatements: [`ispresent(${METRIC.rateLimited})`],
      statsStatements: [`sum(${METRIC.rateLimited}) as refused by namespace, category`],
      sort: 'refused desc',
    }),
  },
  webhookFailures: {
    title: 'Webhook deliveries that failed after all retries, by webhook',
    logs: 'functions',
    query: new QueryString({
      filterStatements: ['message = "webhook delivery failed"'],
      statsStatements: ['count(*) as failures, latest(error) as last_error by namespace, webhook'],
      sort: 'failures desc',
    }),
  },
  slowestRequests: {
    title: 'Slowest API requests, long polls excluded',
    logs: 'access',
    query: new QueryString({
      fields: ['@timestamp', 'method', 'path', 'status', 'latency', 'integrationLatency', 'namespace', 'requestId'],
      filterStatements: ['resource not like /consume/'],
      sort: 'latency desc',
      limit: 50,
    }),
  },
} as const satisfies Record<string, { title: string; logs: 'functions' | 'access'; query: QueryString }>;

export type LogQueryId = keyof typeof LOG_QUERIES;

export interface LogQueriesProps {
  /** Log groups of every function. */
  readonly functionLogs: readonly ILogGroup[];
  /** The API's access log group. */
  readonly accessLogs?: ILogGroup;
}

export class LogQueries extends Construct {
  readonly definitions = new Map<LogQueryId, QueryDefinition>();

  constructor(scope: Construct, id: string, props: LogQueriesProps) {
    super(scope, id);
    const prefix = Stack.of(this).stackName;
    for (const [qid, q] of Object.entries(LOG_QUERIES) as [LogQueryId, (typeof LOG_QUERIES)[LogQueryId]][]) {
      const logGroups = q.logs === 'access' ? (props.accessLogs ? [props.accessLogs] : []) : [...props.functionLogs];
      if (logGroups.length === 0) continue;
      this.definitions.set(qid, new QueryDefinition(this, qid, { queryDefinitionName: `${prefix}/${q.title}`, queryString: q.query, logGroups }));
    }
  }
}
