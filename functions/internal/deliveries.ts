/**
 * POST /internal/deliveries — where QStash delivers what the QStash scheduler published. No admin
 * auth: the QStash signature is the authentication. Order matters: the signature is checked on
 * the raw body, then the token id against replays, then the body's shape, and only then is
 * anything written. A handler failure answers 500 so QStash retries (every handler is
 * idempotent), and releases the token id so that retry is not mistaken for a replay.
 */
import { Hono } from "hono";
import type { AppEnv } from "../app-env.ts";
import { RequestError } from "../errors.ts";
import { parseJsonBody } from "../validate.ts";
import { deliveryBodySchema, handleDelivery } from "../../triggers/deliver.ts";
import type { DeliveryBody } from "../../triggers/scheduler.ts";
import { verifyQStashSignature } from "./qstash-signature.ts";
import { acceptSignature, isAccepted, releaseSignature } from "./replay-guard.ts";

const REPLAYED = "QStash signature rejected: this signature (jti) was already accepted";

export const deliveryRoutes = new Hono<AppEnv>().post("/deliveries", async (c) => {
  const deps = c.get("deps");
  const raw = await c.req.text();
  const claims = await verifyQStashSignature(deps.config, c.req.header("Upstash-Signature"), raw);
  if (await isAccepted(deps.db, claims.jti)) throw new RequestError(401, REPLAYED);
  const body: DeliveryBody = parseJsonBody(raw, deliveryBodySchema);
  if (!(await acceptSignature(deps.db, claims.jti, claims.expiresAt, deps.clock.now()))) {
    throw new RequestError(401, REPLAYED);
  }
  let result: string;
  try {
    result = await handleDelivery(deps, body);
  } catch (err) {
    await releaseSignature(deps.db, claims.jti).catch((e: unknown) =>
      deps.log.error("could not release a QStash signature", { jti: claims.jti, error: String(e) }),
    );
    throw err;
  }
  return c.json({ result });
});
