/**
 * Where the examples connect when run from the command line: `MSG_API_URL` and `MSG_API_KEY`,
 * by default the local runtime of `npm start` (http://127.0.0.1:8080/api/v1, key `dev-key`).
 */
import { createMessagingClient, type MessagingClient } from '../client';

export function clientFromEnv(env: NodeJS.ProcessEnv = process.env): MessagingClient {
  return createMessagingClient({ baseUrl: env.MSG_API_URL ?? 'http://127.0.0.1:8080/api/v1', apiKey: env.MSG_API_KEY ?? 'dev-key' });
}

/** Whether `examples/<file>` is the script node was started with (run, not imported by a test). */
export const runAsScript = (file: string) => /[\\/]examples[\\/]([^\\/]+)$/.exec(process.argv[1] ?? '')?.[1] === file;

/** Runs a script's main function, printing a failure instead of an unhandled rejection. */
export function runMain(main: () => Promise<void>) {
  main().catch((e: unknown) => {
    console.error(e instanceof Error ? e.message : e);
    process.exit(1);
  });
}
