/**
 * Verifies a QStash delivery's `Upstash-Signature` (an HS256 JWT over the raw body) with the
 * SDK's Receiver, trying the current then the next signing key, and returns the claims the replay
 * guard needs. Every way a signature can be wrong is a 401; nothing here touches the database.
 */
import { Receiver } from "@upstash/qstash";
import type { Config } from "../../runtime/config.ts";
import { deliveriesUrl } from "../../triggers/qstash-scheduler.ts";
import { RequestError } from "../errors.ts";

/** Seconds of clock skew tolerated on `nbf`/`exp` between QStash and this host. */
const CLOCK_TOLERANCE_S = 5;

export interface SignatureClaims {
  jti: string;
  /** ms epoch after which the signature is no longer valid. */
  expiresAt: number;
}

function decodeClaims(token: string): Record<string, unknown> {
  const part = token.split(".")[1] ?? "";
  const base64 = part.replace(/-/g, "+").replace(/_/g, "/");
  const bytes = Uint8Array.from(atob(base64 + "=".repeat((4 - (base64.length % 4)) % 4)), (c) => c.charCodeAt(0));
  const claims: unknown = JSON.parse(new TextDecoder().decode(bytes));
  return claims && typeof claims === "object" ? (claims as Record<string, unknown>) : {};
}

export async function verifyQStashSignature(
  config: Config,
  signature: string | undefined,
  rawBody: string,
): Promise<SignatureClaims> {
  const { currentSigningKey, nextSigningKey } = config.qstash;
  if (!currentSigningKey || !nextSigningKey) {
    throw new RequestError(503, "QStash deliveries are disabled: QSTASH_CURRENT_SIGNING_KEY and QSTASH_NEXT_SIGNING_KEY are not configured");
  }
  if (!signature) throw new RequestError(401, "missing Upstash-Signature header");
  try {
    // devMode false: a QSTASH_DEV variable must never swap in the SDK's well-known dev keys.
    await new Receiver({ currentSigningKey, nextSigningKey, devMode: false }).verify({
      signature,
      body: rawBody,
      url: config.publicUrl ? deliveriesUrl(config.publicUrl) : undefined,
      clockTolerance: CLOCK_TOLERANCE_S,
    });
  } catch (err) {
    // Fail closed: whatever the Receiver could not verify (bad key, expiry, body hash, garbage).
    throw new RequestError(401, `QStash signature rejected: ${err instanceof Error ? err.message : String(err)}`);
  }
  const claims = decodeClaims(signature);
  const { jti, exp } = claims;
  if (typeof jti !== "string" || jti === "" || jti.length > 256) throw new RequestError(401, "QStash signature rejected: no usable jti claim");
  if (typeof exp !== "number") throw new RequestError(401, "QStash signature rejected: no exp claim");
  return { jti, expiresAt: (exp + CLOCK_TOLERANCE_S) * 1000 };
}
