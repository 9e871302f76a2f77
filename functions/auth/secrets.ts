/**
 * The one place secrets are made and compared: random tokens and session ids (256 bits), their
 * SHA-256 hashes (what the database stores), and constant-time comparison. Web Crypto only, so
 * the same code runs in workerd.
 */

const hex = (bytes: ArrayBuffer | Uint8Array) =>
  [...(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes))].map((b) => b.toString(16).padStart(2, "0")).join("");

/** A random token of 32 bytes, hex, with an optional prefix saying what it is. */
export function randomToken(prefix = ""): string {
  return prefix + hex(crypto.getRandomValues(new Uint8Array(32)));
}

export async function sha256Hex(value: string): Promise<string> {
  return hex(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(value)));
}

/** Equal strings, in time that depends only on the longer one's length. */
function constantTimeEqual(a: string, b: string): boolean {
  let out = a.length ^ b.length;
  for (let i = 0; i < Math.max(a.length, b.length); i++) out |= (a.charCodeAt(i) | 0) ^ (b.charCodeAt(i) | 0);
  return out === 0;
}

/**
 * The hash of the last expected secret. Every bearer request compares against the same one
 * (ADMIN_TOKEN), so it is hashed once rather than per request; one entry, so it never grows.
 * Only the server's own secret is compared here, never what a client sent.
 */
let expectedHash: { secret: string; hash: Promise<string> } | null = null;
function hashOfExpected(secret: string): Promise<string> {
  if (expectedHash?.secret !== secret) expectedHash = { secret, hash: sha256Hex(secret) };
  return expectedHash.hash;
}

/**
 * True when both are non-empty and equal; constant time whatever the lengths (as hono's
 * timingSafeEqual: the hashes and the strings are both compared in constant time).
 */
export async function sameSecret(given: string | undefined | null, expected: string | undefined | null): Promise<boolean> {
  if (!given || !expected) return false;
  const [a, b] = await Promise.all([sha256Hex(given), hashOfExpected(expected)]);
  return constantTimeEqual(a, b) && constantTimeEqual(given, expected);
}
