/**
 * Powertools logger shared by every function: structured JSON with the request id and, once the
 * request is authorized, its namespace. Payloads and keys are never logged.
 */
import { Logger } from '@aws-lambda-powertools/logger';

export const logger = new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'messaging' });
