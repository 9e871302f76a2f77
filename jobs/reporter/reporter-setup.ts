/**
 * What an instance needs to run the reporter (GET /api/agents/:agent/instances/:id/reporter and
 * the instance page's reveal form): that instance's own signing key (auth/webhook-secrets.ts
 * `reporterKey`, derived from the agent's current secret, so it rotates with it and verifies
 * reports for this id only), the environment reporter/reporter.sh reads, and a one-line install
 * for a Vast.ai on-start script or a RunPod start command. Operators only, and every reveal is
 * audited (`reporter_key`; the key itself is never recorded).
 */
import type { Deps } from "../deps.ts";
import { RequestError } from "../errors.ts";
import { withAgent } from "../with-agent.ts";
import { recordActivity } from "../../auth/activity.ts";
import type { Principal } from "../../auth/roles.ts";
import { reporterKey, verifyingSecrets } from "../../auth/webhook-secrets.ts";

export interface ReporterSetup {
  key: string;
  env: { FLEETWARDEN_URL: string; FLEETWARDEN_AGENT: string; FLEETWARDEN_KEY: string; FLEETWARDEN_INSTANCE_ID: string };
  command: string;
}

/** What reporter.sh accepts as an instance id (and the API's instance routes). */
const INSTANCE_ID = /^[\w.:-]{1,128}$/;

/** A value as one single-quoted shell word. */
const quote = (value: string) => `'${value.replaceAll("'", `'"'"'`)}'`;

/**
 * The setup for one instance. `origin` is the request's own, used when PUBLIC_URL is unset.
 * 400 an id the script would refuse, 404 unknown agent, 409 archived, 503 when the agent has no secret (webhooks disabled).
 */
export async function reporterSetup(
  deps: Deps,
  who: Principal,
  input: { agentId: string; instanceId: string; origin: string },
): Promise<ReporterSetup> {
  if (!INSTANCE_ID.test(input.instanceId))
    throw new RequestError(400, "invalid instance id: must be 1-128 word characters, '.', ':' or '-'");
  const scope = await withAgent(deps, input.agentId);
  if (!scope) throw new RequestError(404, `unknown agent: ${input.agentId}`);
  if (scope.archived) throw new RequestError(409, `agent ${input.agentId} is archived`);
  const now = deps.clock.now();
  // The current secret (the first verifying one): a key from it keeps working through a rotation's grace.
  const [secret] = verifyingSecrets(scope.agent, deps.config.webhookSecret, now);
  if (!secret) throw new RequestError(503, "webhooks are disabled: WEBHOOK_SECRET is not configured");
  const key = await reporterKey(secret, input.instanceId);
  const url = (deps.config.publicUrl ?? input.origin).replace(/\/+$/, "");
  const env = { FLEETWARDEN_URL: url, FLEETWARDEN_AGENT: input.agentId, FLEETWARDEN_KEY: key, FLEETWARDEN_INSTANCE_ID: input.instanceId };
  const assignments = Object.entries(env)
    .map(([name, value]) => `${name}=${quote(value)}`)
    .join(" ");
  const command = `curl -fsSL ${quote(`${url}/reporter.sh`)} | ${assignments} nohup sh -s >/tmp/fleetwarden-reporter.log 2>&1 &`;
  await recordActivity(deps.db, who, { action: "reporter_key", agentId: input.agentId, subject: input.instanceId, at: now });
  return { key, env, command };
}
