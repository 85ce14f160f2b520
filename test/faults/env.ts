/** Environment of the fault suite's workers: its own engines (./global-setup.ts) and local settings. */
import { randomBytes } from 'node:crypto';

process.env.MSG_DYNAMODB_ENDPOINT = process.env.MSG_FAULTS_DYNAMODB_ENDPOINT;
process.env.MSG_SQS_ENDPOINT = process.env.MSG_FAULTS_SQS_ENDPOINT;
process.env.MSG_RECEIPT_KEY = randomBytes(32).toString('hex');
process.env.AWS_REGION = 'us-east-1';
process.env.AWS_ACCESS_KEY_ID = 'local';
process.env.AWS_SECRET_ACCESS_KEY = 'local';
process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
process.env.POWERTOOLS_TRACE_ENABLED = 'false';
process.env.POWERTOOLS_METRICS_NAMESPACE = 'MessagingTest';
process.env.POWERTOOLS_METRICS_DISABLED = 'true';
process.env.MSG_BASE_DOMAIN = 'localhost';
process.env.MSG_ALLOW_PRIVATE_WEBHOOK_TARGETS = 'true';
