/**
 * The local runtime's state file: `npm start` writes where its DynamoDB answers, so the admin CLI
 * (bin/admin.ts) can find a running runtime by its port alone. One file per port in the OS temp
 * directory, removed on shutdown; a file left behind by a killed runtime is recognised by its pid.
 */
import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface LocalState {
  /** Process id of the `npm start` that wrote the file. */
  pid: number;
  port: number;
  dynamodbEndpoint: string;
  /** Where its SQS (fauxqs) answers. */
  sqsEndpoint?: string;
  /**
   * Its receipt-handle signing key, so local tools (npm run invoke) sign and verify handles like
   * the runtime. The file is the user's own (mode 0600), as the key file under MSG_DATA_DIR is.
   */
  receiptKey?: string;
  /** Physical table names by table id (MSG_META_TABLE and friends may rename them). */
  tables: Record<string, string>;
}

/** Where the runtime serving `port` keeps its state. */
export const stateFilePath = (port: number, dir: string = tmpdir()): string => join(dir, `msg-local-${port}.json`);

export function writeStateFile(state: LocalState, dir?: string): string {
  const path = stateFilePath(state.port, dir);
  writeFileSync(path, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  return path;
}

/** The state of the runtime on `port`, or undefined when none wrote a file. */
export function readStateFile(port: number, dir?: string): LocalState | undefined {
  try {
    return JSON.parse(readFileSync(stateFilePath(port, dir), 'utf8')) as LocalState;
  } catch {
    return undefined;
  }
}

/** Removes the file of `port` if this process wrote it (never another runtime's file). */
export function removeStateFile(port: number, dir?: string): void {
  if (readStateFile(port, dir)?.pid !== process.pid) return;
  try {
    unlinkSync(stateFilePath(port, dir));
  } catch {
    // Already gone: nothing to clean up.
  }
}

/** Whether the process that wrote `state` is still running. */
export function isAlive(state: LocalState): boolean {
  try {
    process.kill(state.pid, 0);
    return true;
  } catch (e) {
    // EPERM: the process exists but belongs to another user.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
