/** Environment of every integration test worker: the local endpoint and local settings. */
import { installAwsHarsh } from '../../local/aws-harsh';
import { sendUnsigned } from '../fixtures/unsigned-requests';

process.env.AWS_REGION = 'us-east-1';
process.env.AWS_ACCESS_KEY_ID = 'local';
process.env.AWS_SECRET_ACCESS_KEY = 'local';
process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
process.env.POWERTOOLS_TRACE_ENABLED = 'false';
process.env.POWERTOOLS_METRICS_NAMESPACE = 'MessagingTest';
process.env.POWERTOOLS_METRICS_DISABLED = 'true';
process.env.MSG_BASE_DOMAIN = 'localhost';
process.env.MSG_ALLOW_PRIVATE_WEBHOOK_TARGETS = 'true';

// The local engines behave like AWS where AWS is less kind (local/aws-harsh), before any SDK client exists.
installAwsHarsh();

// Requests to the local engines unsigned (test/fixtures/unsigned-requests.ts says why), before any SDK client exists.
sendUnsigned();
