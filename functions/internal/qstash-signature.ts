/**
 * Verifies a QStash delivery's `Upstash-Signature`: an HS256 JWT over the raw body, checked with
 * the SDK's Receiver (current then next signing key) against the issuer, the expiry, the body hash
 * and always the subject, PUBLIC_URL/internal/deliveries (configuration refuses signing keys
 * without PUBLIC_URL). Any other algorithm is refused before the Receiver sees it. Every way a
 * signature can be wrong is a 401 whose body says only "signature rejected"; the reason is logged.
 * Nothing here touches the database.
 */
import { Receiver } from "@upstash/qstash";
import type { Config } from "../../runtime/config.ts";
import type { Logger } from "../../runtime/log.ts";
import { deliveriesUrl } from "../../pipeline/index.ts";
import { RequestError } from "../../jobs/errors.ts";

/** Seconds of clock skew tolerated on `nbf`/`exp` between QStash and this host. */
const CLOCK_TOLERANCE_S = 5;

export const SIGNATURE_REJECTED = "signature rejected";

export interface SignatureClaims {
  jti: string;
  /** ms epoch after which the signature is no longer valid. */
  expiresAt: number;
}

/** What QStash deliveries need from the configuration, or null when they are off (404). */
export function qstashReceiverConfig(config: Config) {
  const { currentSigningKey, nextSigningKey } = config.qstash;
  if (!currentSigningKey || !nextSigningKey || !config.publicUrl) return null;
  return { currentSigningKey, nextSigningKey, url: deliveriesUrl(config.publicUrl) };
}

function decodePart(token: string, index: number): Record<string, unknown> {
  try {
    const part = token.split(".")[index] ?? "";
    const base64 = part.replace(/-/g, "+").replace(/_/g, "/");
    const bytes = Uint8Array.from(atob(base64 + "=".repeat((4 - (base64.length % 4)) % 4)), (c) => c.charCodeAt(0));
    const value: unknown = JSON.parse(new TextDecoder().decode(bytes));
    return value && typeof value === "object" ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

export async function verifyQStashSignature(
  receiver: NonNullable<ReturnType<typeof qstashReceiverConfig>>,
  signature: string | undefined,
  rawBody: string,
  log: Logger,
): Promise<SignatureClaims> {
  const reject = (reason: string): never => {
    log.info("QStash signature rejected", { reason });
    throw new RequestError(401, SIGNATURE_REJECTED);
  };
  if (!signature) return reject("missing Upstash-Signature header");
  const alg = decodePart(signature, 0).alg;
  if (alg !== "HS256") return reject(`algorithm ${String(alg)} is not HS256`);
  try {
    // devMode false: a QSTASH_DEV variable must never swap in the SDK's well-known dev keys.
    await new Receiver({ currentSigningKey: receiver.currentSigningKey, nextSigningKey: receiver.nextSigningKey, devMode: false }).verify({
      signature,
      body: rawBody,
      url: receiver.url,
      clockTolerance: CLOCK_TOLERANCE_S,
    });
  } catch (err) {
    // Fail closed: whatever the Receiver could not verify (bad key, expiry, body hash, subject, garbage).
    return reject(err instanceof Error ? err.message : String(err));
  }
  const { jti, exp } = decodePart(signature, 1);
  if (typeof jti !== "string" || jti === "" || jti.length > 256) return reject("no usable jti claim");
  if (typeof exp !== "number") return reject("no exp claim");
  return { jti, expiresAt: (exp + CLOCK_TOLERANCE_S) * 1000 };
}
