export default async function globalTeardown() {
  const g = globalThis as unknown as Record<string, { stop(): Promise<void> } | undefined>;
  await Promise.all([g.__sqs?.stop(), g.__dynamo?.stop()]);
}
