/**
 * Who may read GET /metrics: a Prometheus scraper with METRICS_TOKEN (that token opens nothing
 * else), or any operator's credential of viewer role or above, checked as the API checks it
 * (auth/api-auth.ts, with its throttling). Without either it is 401, as for the API.
 */
import { createMiddleware } from "hono/factory";
import type { AuthEnv } from "./auth-env.ts";
import { apiAuth } from "./api-auth.ts";
import { requireRole } from "./require-role.ts";
import { sameSecret } from "./secrets.ts";

const viewer = requireRole("viewer");

export const metricsAuth = createMiddleware<AuthEnv>(async function metricsAuthMiddleware(c, next) {
  const token = c.get("deps").config.metricsToken;
  const bearer = c.req
    .header("Authorization")
    ?.match(/^Bearer\s+(.+)$/i)?.[1]
    ?.trim();
  if (token && bearer && (await sameSecret(bearer, token))) return next();
  let refusal: Response | undefined;
  const unauthenticated = await apiAuth(c, async () => {
    refusal = (await viewer(c, next)) ?? undefined;
  });
  return unauthenticated ?? refusal;
});
