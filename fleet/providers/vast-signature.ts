/**
 * Vast.ai's notification webhook signature, as vast-ai/docs guides/reference/notification-webhooks.mdx
 * documents it: `X-Vast-Signature-256` is `sha256=` + hex HMAC-SHA256, keyed with the webhook's
 * `webhook_secret` (its UTF-8 bytes), of `<X-Vast-Timestamp>.<raw body>`; the integer Unix
 * timestamp may be at most 300 s from our clock either way (the docs' example's replay window).
 * WebCrypto only, so it runs on both hosts. Answers the problem as a sentence, or null when valid.
 */

/** How far `X-Vast-Timestamp` may be from our clock, either way (the docs' `age > 300`). */
export const VAST_SIGNATURE_TOLERANCE_S = 300;

export interface VastSignatureHeaders {
  timestamp: string | undefined;
  signature: string | undefined;
}

const encoder = new TextEncoder();

/** `sha256=` + the hex HMAC-SHA256 of `<timestamp>.<raw>` under `secret`. */
export async function vastSignature(secret: string, timestamp: string, raw: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(`${timestamp}.${raw}`)));
  return `sha256=${Array.from(mac, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** Equal strings in time that does not depend on where they differ. */
function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

export async function vastSignatureProblem(
  secret: string,
  headers: VastSignatureHeaders,
  raw: string,
  nowMs: number,
): Promise<string | null> {
  const { timestamp, signature } = headers;
  if (!timestamp) return "missing header X-Vast-Timestamp";
  if (!signature) return "missing header X-Vast-Signature-256";
  if (!/^\d{1,12}$/.test(timestamp)) return "X-Vast-Timestamp is not an integer Unix timestamp";
  if (!signature.startsWith("sha256=")) return "X-Vast-Signature-256 does not start with sha256=";
  const age = Math.abs(nowMs / 1000 - Number(timestamp));
  if (age > VAST_SIGNATURE_TOLERANCE_S)
    return `stale X-Vast-Timestamp: ${Math.round(age)} s from our clock (at most ${VAST_SIGNATURE_TOLERANCE_S} s)`;
  return sameText(signature, await vastSignature(secret, timestamp, raw)) ? null : "X-Vast-Signature-256 does not match the body";
}
