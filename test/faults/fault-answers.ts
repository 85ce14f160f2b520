/**
 * How an injected fault looks on the wire (./injector.ts): the error answer a service sends in its
 * JSON protocol, a real answer read to its end before it is dropped, an injected error told from
 * the engine's own, and the service message id an SQS body carries (to count SQS copies).
 */
import { Readable } from 'node:stream';
import type { FaultKind, Service } from './fault-kinds';

/** The service message id an SQS body carries (queue messages and delivery jobs alike). */
export function messageIdOf(body: string): string | undefined {
  try {
    const b = JSON.parse(body) as { message_id?: string; message?: { message_id?: string }; message_ref?: { message_id?: string } };
    return b.message_id ?? b.message?.message_id ?? b.message_ref?.message_id;
  } catch {
    return undefined;
  }
}

export const isInjected = (e: unknown) => {
  const err = e as { injected?: boolean; message?: string };
  return err?.injected === true || /^injected:/.test(err?.message ?? '');
};

export async function drain(body: unknown) {
  if (body && typeof (body as Readable).on === 'function') {
    for await (const _ of body as Readable) {
      // Read to the end so the connection returns to the pool.
    }
  }
}

/**
 * The answer the service sends for `kind` in its JSON protocol (all three speak AWS JSON 1.0):
 * the status, `__type` in the body (with the kind's other `fields`) and, for SQS, the
 * query-compatible error header the SDK reads.
 */
export function errorResponse(service: Service, kind: FaultKind) {
  const body = JSON.stringify({ __type: kind.code, message: `injected: ${kind.code}`, ...kind.fields });
  const headers: Record<string, string> = {
    'content-type': 'application/x-amz-json-1.0',
    'x-amzn-requestid': `fault-${Math.random().toString(36).slice(2)}`,
    'content-length': String(Buffer.byteLength(body)),
  };
  if (service === 'sqs') headers['x-amzn-query-error'] = `${kind.code};${kind.status >= 500 ? 'Receiver' : 'Sender'}`;
  return { statusCode: kind.status, reason: undefined, headers, body: Readable.from([Buffer.from(body)]) };
}
