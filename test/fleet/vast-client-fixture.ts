/**
 * The Vast.ai client tests' setup: a VastProvider pointed at a fresh strict fake
 * (vast-server.ts) per call, with its back-off sleeps recorded instead of waited, the fake closed
 * after each test; and the ProviderError a failing call must throw.
 */
import { afterEach, expect } from "vitest";
import { ProviderError } from "../../fleet/providers/provider.ts";
import { VastProvider, type VastOptions } from "../../fleet/providers/vast.ts";
import { startVastServer, type VastFakeOptions, type VastServer } from "./vast-server.ts";

/** Call at a test file's top level: answers `client(fake, options)` for that file's tests. */
export function useVastClient(apiKey: string) {
  let server: VastServer | null = null;
  afterEach(async () => {
    await server?.close();
    server = null;
  });
  return async function client(fake: VastFakeOptions, options: Partial<VastOptions> = {}) {
    await server?.close();
    server = await startVastServer({ apiKey, ...fake });
    const slept: number[] = [];
    // A trailing slash on the base URL, as users paste it: the client trims it.
    const vast = new VastProvider({ apiKey, baseUrl: `${server.url}/`, sleep: async (ms) => void slept.push(ms), ...options });
    return { vast, slept, requests: server.requests, fake: server };
  };
}

/** The ProviderError `promise` rejects with (fails the test when it resolves or throws another). */
export async function providerError(promise: Promise<unknown>): Promise<ProviderError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProviderError);
  return err as ProviderError;
}
