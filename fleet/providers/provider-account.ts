/**
 * Which provider account a provider acts on (issue #33 item 6): several agents may share one
 * Vast.ai, RunPod or Lambda key, each with or without an instance filter, and one death must be
 * replaced once per account whichever agents see it (replacements.account with the unique index
 * `replacements_account_open`). The identity is the provider's kind and a SHA-256 fingerprint of
 * its endpoint and API key, never the key itself: it is stored on replacement rows and may be shown.
 * The simulator is one account per database. A provider of another make (a test's wrapper, an
 * agent whose account has no key) has no known account: null, and only the per-agent rule holds.
 */
import type { FleetProvider } from "./provider.ts";
import { LambdaProvider } from "./lambda.ts";
import { RunpodProvider } from "./runpod.ts";
import { ScopedProvider } from "./scoped-provider.ts";
import { SimulatorProvider } from "./simulator.ts";
import { VastProvider } from "./vast.ts";

/** Hex characters of the fingerprint kept: 64 bits, enough to tell accounts apart, nothing to recover a key from. */
const FINGERPRINT_HEX = 16;

/** `<kind>:<fingerprint>` of the account `provider` acts on, or null when unknown. */
export async function providerAccount(provider: FleetProvider): Promise<string | null> {
  const inner = provider instanceof ScopedProvider ? provider.inner : provider;
  if (inner instanceof SimulatorProvider) return "simulator";
  if (!(inner instanceof VastProvider || inner instanceof LambdaProvider || inner instanceof RunpodProvider)) return null;
  // The options are private to each provider; read here only to fingerprint them.
  const options = (inner as unknown as { options: { apiKey: string; baseUrl?: string; url?: string } }).options;
  const account = { apiKey: options.apiKey, baseUrl: options.baseUrl ?? options.url ?? "" };
  const base = account.baseUrl.replace(/\/+$/, "");
  return `${inner.kind}:${await fingerprint(`${inner.kind}\n${base}\n${account.apiKey}`)}`;
}

async function fingerprint(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("")
    .slice(0, FINGERPRINT_HEX);
}
