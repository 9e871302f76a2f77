/**
 * Errors in one place: expected failures are HTTPExceptions or RequestErrors (runtime/errors.ts)
 * and become `{error}` JSON with their status; anything else is logged with the request id and
 * answered as a 500 that reveals no internals. No other error's `status` is read: a provider's or
 * a channel's status is theirs, not ours, and a domain error that is the caller's to fix is
 * turned into a RequestError where it is caught (or is one).
 */
import type { ErrorHandler, NotFoundHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { AppEnv } from "./app-env.ts";
import { jsonError, RequestError } from "../runtime/errors.ts";

export { jsonError, RequestError };

export const handleError: ErrorHandler<AppEnv> = (err, c) => {
  if (err instanceof HTTPException) return jsonError(c, err.status as ContentfulStatusCode, err.message || "request failed");
  if (err instanceof RequestError) return jsonError(c, err.status, err.message);
  const requestId = c.get("requestId");
  const log = c.get("deps")?.log;
  const fields = { requestId, path: c.req.path, error: err.stack ?? String(err) };
  if (log) log.error("unhandled error", fields);
  else console.error(JSON.stringify({ level: "error", message: "unhandled error", ...fields }));
  return c.json({ error: "internal error", requestId }, 500);
};

export const handleNotFound: NotFoundHandler<AppEnv> = (c) => jsonError(c, 404, `not found: ${c.req.method} ${c.req.path}`);
