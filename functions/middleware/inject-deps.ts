/** Puts the host's dependencies on the context; the host decides how they are built and cached. */
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../../jobs/app-env.ts";
import type { Deps } from "../../jobs/deps.ts";

export type ResolveDeps = (bindings: AppEnv["Bindings"]) => Deps | Promise<Deps>;

export function injectDeps(resolve: ResolveDeps) {
  return createMiddleware<AppEnv>(async function injectDepsMiddleware(c, next) {
    c.set("deps", await resolve(c.env ?? {}));
    await next();
  });
}
