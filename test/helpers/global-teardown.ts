export default async function globalTeardown(): Promise<void> {
  const started = (globalThis as { __testTeardown?: Array<() => Promise<void>> }).__testTeardown ?? [];
  for (const stop of started.reverse()) await stop().catch(() => undefined);
}
