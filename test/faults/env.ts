/**
 * Environment of the fault suite's workers, after test/integration/env.ts (jest.config.cjs): its
 * own engines (./global-setup.ts) and its own receipt-handle key.
 */
import { randomBytes } from 'node:crypto';

process.env.MSG_DYNAMODB_ENDPOINT = process.env.MSG_FAULTS_DYNAMODB_ENDPOINT;
process.env.MSG_SQS_ENDPOINT = process.env.MSG_FAULTS_SQS_ENDPOINT;
process.env.MSG_RECEIPT_KEY = randomBytes(32).toString('hex');
