/**
 * POST /internal/deliveries — where QStash delivers what the QStash scheduler published. No admin
 * auth: the QStash signature is the authentication. Without signing keys the route does not
 * exist (404, never a 5xx to a stranger). Order matters: the signature is checked on
 * the raw body, then the token id against replays (a bad body's by a read, a good one's by the
 * batch that records it), then the body's shape, and only then is anything written. A signed body that is not a delivery answers 489 non-retryable (below): no
 * retry can make it one. A handler failure answers 500 so QStash retries (every handler is
 * idempotent), and releases the token id so that retry is not mistaken for a replay.
 */
import { Hono } from "hono";
import type { AppEnv } from "../../jobs/app-env.ts";
import { jsonError, RequestError } from "../../jobs/errors.ts";
import { parseJsonBody } from "../../jobs/validate.ts";
import { deliveryBodySchema, handleDelivery } from "../../jobs/deliver.ts";
import type { DeliveryBody } from "../../pipeline/index.ts";
import type { Logger } from "../../runtime/log.ts";
import { qstashReceiverConfig, SIGNATURE_REJECTED, verifyQStashSignature } from "./qstash-signature.ts";
import { acceptSignature, isAccepted, releaseSignature } from "./replay-guard.ts";
import { keepAlive } from "../../jobs/keep-alive.ts";

/**
 * QStash retries every answer that is not 2xx, unless it is a 489 carrying
 * `Upstash-NonRetryable-Error: true`: then it marks the message failed at once and moves it to
 * the dead letter queue (upstash/docs qstash/features/retry.mdx, "Non-Retryable Error", commit
 * 347f3b38a8cbd8e03396d3645a797972c0b729d7). hono's status types stop at the registered codes,
 * so this answer is built as a plain Response.
 */
function nonRetryable(log: Logger, problem: string): Response {
  log.info("QStash delivery refused, not retryable", { error: problem });
  return Response.json({ error: problem }, { status: 489, headers: { "Upstash-NonRetryable-Error": "true" } });
}

/** The signed body as a delivery, or the problem that makes it none (not JSON, wrong shape). */
function readDelivery(raw: string): DeliveryBody | { problem: string } {
  try {
    return parseJsonBody(raw, deliveryBodySchema);
  } catch (err) {
    if (err instanceof RequestError) return { problem: err.message };
    throw err;
  }
}

export const deliveryRoutes = new Hono<AppEnv>().post("/deliveries", async (c) => {
  const deps = c.get("deps");
  const receiver = qstashReceiverConfig(deps.config);
  if (!receiver) return jsonError(c, 404, `not found: ${c.req.method} ${c.req.path}`);
  const raw = await c.req.text();
  const claims = await verifyQStashSignature(receiver, c.req.header("Upstash-Signature"), raw, deps.log);
  const replayed = () => {
    deps.log.info("QStash signature rejected", { reason: "token id already accepted", jti: claims.jti });
    return new RequestError(401, SIGNATURE_REJECTED);
  };
  // The body's shape is read first (no database), so a good delivery's replay check is the one
  // batch that records its token id (issue 26: a round trip fewer per delivery); a bad body is
  // still refused as a replay when its token id was accepted, as before.
  const body = readDelivery(raw);
  if ("problem" in body) {
    if (await isAccepted(deps.db, claims.jti)) throw replayed();
    return nonRetryable(deps.log, body.problem);
  }
  if (!(await acceptSignature(deps.db, claims.jti, claims.expiresAt, deps.clock.now()))) throw replayed();
  let result: string;
  try {
    result = await handleDelivery({ ...deps, background: keepAlive(c) }, body);
  } catch (err) {
    await releaseSignature(deps.db, claims.jti).catch((e: unknown) =>
      deps.log.error("could not release a QStash signature", { jti: claims.jti, error: String(e) }),
    );
    throw err;
  }
  return c.json({ result });
});
