/**
 * The sign-in form's anti-forgery token, issued without a write: `<expiry>.<nonce>.<mac>`, the
 * MAC an HMAC-SHA-256 over expiry and nonce with a key derived from ADMIN_TOKEN (the server's
 * one secret on both hosts; without it nobody can sign in, and a key of this process stands in).
 * A GET of the form writes nothing, so no flood of anonymous page loads can fill a table or push
 * out a victim's token (issue #25). A token is good for 30 minutes and once: the post that uses
 * it records its hash (the only write, on a POST), and records older than their expiry are pruned
 * in the same batch, so the table holds at most the last 30 minutes' sign-in posts. Changing
 * ADMIN_TOKEN voids the forms outstanding.
 */
import { lte } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { signInTokens } from "../schema/index.ts";
import { randomToken, sameSecret, sha256Hex } from "./secrets.ts";

export const SIGN_IN_TOKEN_TTL_MS = 30 * 60 * 1000;

const keys = new Map<string, Promise<CryptoKey>>();
// Made on first use: a Worker may not generate random values at start-up (global scope).
let processSecret: string | null = null;

function keyFor(adminToken: string | undefined): Promise<CryptoKey> {
  const secret = adminToken ?? (processSecret ??= randomToken());
  let key = keys.get(secret);
  if (!key) {
    key = sha256Hex(`fleetwarden sign-in form key\n${secret}`).then((material) =>
      crypto.subtle.importKey("raw", new TextEncoder().encode(material), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]),
    );
    keys.clear(); // one ADMIN_TOKEN at a time: the map never grows
    keys.set(secret, key);
  }
  return key;
}

async function mac(adminToken: string | undefined, body: string): Promise<string> {
  const signature = await crypto.subtle.sign("HMAC", await keyFor(adminToken), new TextEncoder().encode(`sign-in:${body}`));
  return [...new Uint8Array(signature)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** A fresh form token: nothing is written. */
export async function issueSignInToken(adminToken: string | undefined, now: number): Promise<string> {
  const body = `${now + SIGN_IN_TOKEN_TTL_MS}.${randomToken().slice(0, 32)}`;
  return `${body}.${await mac(adminToken, body)}`;
}

/** True exactly once per token this server issued, before it expires. */
export async function consumeSignInToken(db: Db, adminToken: string | undefined, token: string, now: number): Promise<boolean> {
  const parts = /^(\d{1,16})\.([0-9a-f]{32})\.([0-9a-f]{64})$/.exec(token);
  if (!parts) return false;
  const expiresAt = Number(parts[1]);
  if (expiresAt <= now || expiresAt > now + SIGN_IN_TOKEN_TTL_MS) return false;
  if (!(await sameSecret(parts[3], await mac(adminToken, `${parts[1]}.${parts[2]}`)))) return false;
  const [, used] = await db.batch([
    db.delete(signInTokens).where(lte(signInTokens.expiresAt, now)),
    db
      .insert(signInTokens)
      .values({ tokenHash: await sha256Hex(token), expiresAt })
      .onConflictDoNothing()
      .returning({ tokenHash: signInTokens.tokenHash }),
  ]);
  return used.length === 1;
}
