/**
 * The serving part of the local runtime, once storage is up: the local gateway in front of the
 * handlers, and the timers that stand in for EventBridge schedules.
 */
import type { Server } from 'node:http';
import { createGateway, loadHandlers } from './gateway';

export interface Runtime {
  server: Server;
  stop(): Promise<void>;
}

export async function startRuntime({ port, host = '127.0.0.1', log }: { port: number; host?: string; log: (l: string) => void }): Promise<Runtime> {
  const handlers = await loadHandlers();
  const accessLog = process.env.MSG_ACCESS_LOG === 'true';
  const server = createGateway({ handlers, log: (l) => (accessLog || l.startsWith('gateway:') ? log(l) : undefined) });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    server,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
