/**
 * A presented token, the one way in by token for the API's bearer and the dashboard's sign-in:
 * ADMIN_TOKEN or a live operator's token names its principal; anything else (an empty token too)
 * counts as a failed authentication toward the address's lockout (throttle.ts). Callers ask for
 * the lockout first (currentLockout), so a locked-out address never gets this far.
 */
import type { PipelineDeps } from "../pipeline/index.ts";
import { principalForToken } from "./operators-store.ts";
import type { Principal } from "./roles.ts";
import { recordAuthFailure } from "./throttle.ts";

/** The principal `given` stands for, or null once its failure is counted (`what` names the door in the log). */
export async function authenticateToken(
  deps: Pick<PipelineDeps, "db" | "clock" | "config" | "log">,
  address: string,
  given: string | undefined,
  what: string,
): Promise<Principal | null> {
  const principal = given ? await principalForToken(deps.db, deps.config.adminToken, given) : null;
  if (!principal) await recordAuthFailure(deps, address, what);
  return principal;
}
