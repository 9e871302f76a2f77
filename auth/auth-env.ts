/**
 * The part of the app's context that authentication reads and sets. jobs/app-env.ts extends it
 * into the one context type of the app, so every auth middleware fits every route.
 */
import type { PipelineDeps } from "../pipeline/index.ts";
import type { Principal } from "./roles.ts";
import type { LiveSession } from "./sessions-store.ts";

export type AuthEnv = {
  Bindings: Record<string, unknown>;
  Variables: {
    deps: PipelineDeps;
    requestId: string;
    /** Who is acting: set by the API's auth and the dashboard's session guard. */
    operator: Principal;
    /** The dashboard session of this request's cookie, once looked up (null: none). */
    session: LiveSession | null;
  };
};
