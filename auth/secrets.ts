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

/**
 * True when both are non-empty and equal, in time that depends only on the length of what was
 * given (which its sender knows): every character of `given` is compared, against `expected`
 * cycled, so neither the position of a difference nor `expected`'s length shows. No hashing, so
 * the admin token check costs no Web Crypto job per request.
 */
export async function sameSecret(given: string | undefined | null, expected: string | undefined | null): Promise<boolean> {
  if (!given || !expected) return false;
  let difference = given.length ^ expected.length;
  for (let i = 0; i < given.length; i++) difference |= given.charCodeAt(i) ^ expected.charCodeAt(i % expected.length);
  return difference === 0;
}
