/**
 * Network latency on a real SDK client, where AWS has it: in the HTTP request handler, below the
 * SDK's middleware (and so below the fault injector of ./injector.ts). Unlike a delay in a
 * middleware, a request held here is cut off by the caller's `abortSignal` as a slow network call
 * would be, which is what a deadline test needs.
 */
type Handler = { handle: (request: { headers: Record<string, string> }, options?: { abortSignal?: AbortSignal }) => Promise<unknown> };

/** Holds the next `times` requests whose `X-Amz-Target` ends with `operation` (e.g. `DeleteMessageBatch`) for `ms`; returns a restore function. */
export function slowRequests(client: { config: { requestHandler: unknown } }, operation: string, ms: number, times = 1): () => void {
  const real = client.config.requestHandler as Handler;
  let left = times;
  const slow: Handler = {
    ...real,
    handle: async (request, options) => {
      const target = request.headers['x-amz-target'] ?? request.headers['X-Amz-Target'] ?? '';
      if (left > 0 && target.endsWith(`.${operation}`)) {
        left--;
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(resolve, ms);
          options?.abortSignal?.addEventListener('abort', () => {
            clearTimeout(timer);
            reject(Object.assign(new Error('Request aborted'), { name: 'AbortError' }));
          });
        });
      }
      return real.handle(request, options);
    },
  };
  Object.setPrototypeOf(slow, Object.getPrototypeOf(real));
  client.config.requestHandler = slow;
  return () => {
    client.config.requestHandler = real;
  };
}
