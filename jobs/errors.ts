/**
 * Errors in one place: expected failures are HTTPExceptions (or named errors carrying a status)
 * and become `{error}` JSON with their status; anything else is logged with the request id and
 * answered as a 500 that reveals no internals.
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
  const statused = err as { status?: unknown; name?: string };
  if (typeof statused.status === "number" && statused.status >= 400 && statused.status < 500) {
    return jsonError(c, statused.status as ContentfulStatusCode, err.message);
  }
  const requestId = c.get("requestId");
  const log = c.get("deps")?.log;
  const fields = { requestId, path: c.req.path, error: err.stack ?? String(err) };
  if (log) log.error("unhandled error", fields);
  else console.error(JSON.stringify({ level: "error", message: "unhandled error", ...fields }));
  return c.json({ error: "internal error", requestId }, 500);
};

export const handleNotFound: NotFoundHandler<AppEnv> = (c) =>
  jsonError(c, 404, `not found: ${c.req.method} ${c.req.path}`);
