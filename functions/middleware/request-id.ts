/** Gives every request an id (kept from `X-Request-Id` when sane) for logs and error bodies. */
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../app-env.ts";

export function requestId(options: { header?: string } = {}) {
  const header = options.header ?? "X-Request-Id";
  return createMiddleware<AppEnv>(async function requestIdMiddleware(c, next) {
    const given = c.req.header(header);
    const id = given && /^[\w-]{1,64}$/.test(given) ? given : crypto.randomUUID();
    c.set("requestId", id);
    c.header(header, id);
    await next();
  });
}
