export default async function globalTeardown() {
  const dynamo = (globalThis as Record<string, unknown>).__dynamo as { stop(): Promise<void> } | undefined;
  await dynamo?.stop();
}
