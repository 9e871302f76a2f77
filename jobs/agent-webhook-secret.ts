/**
 * Rotating an agent's webhook secret (POST /api/agents/:agent/webhook-secret): a new secret,
 * answered once and never shown again, while the one before keeps verifying until
 * WEBHOOK_SECRET_GRACE_S has passed, so the instances' reporters can be moved over without a
 * report refused. The `default` agent's secret is WEBHOOK_SECRET, rotated in the environment
 * (409 here). Audited in the activity log, without the secret.
 */
import type { Deps } from "./deps.ts";
import { RequestError } from "./errors.ts";
import { recordActivity } from "../auth/activity.ts";
import type { Principal } from "../auth/roles.ts";
import { newWebhookSecret } from "../auth/webhook-secrets.ts";
import { DEFAULT_AGENT, rotateWebhookSecret } from "../pipeline/index.ts";

export interface RotatedSecret {
  webhookSecret: string;
  /** Until when the previous secret still verifies (ms epoch). */
  previousValidUntil: number;
}

export async function rotateAsOperator(
  deps: Pick<Deps, "db" | "clock" | "config">,
  who: Principal,
  agentId: string,
): Promise<RotatedSecret> {
  if (agentId === DEFAULT_AGENT) {
    throw new RequestError(409, "the default agent's webhook secret is WEBHOOK_SECRET: rotate it in the environment");
  }
  const now = deps.clock.now();
  const secret = newWebhookSecret();
  const previousValidUntil = now + deps.config.webhookSecretGraceMs;
  if (!(await rotateWebhookSecret(deps.db, agentId, secret, previousValidUntil))) throw new RequestError(404, `unknown agent: ${agentId}`);
  await recordActivity(deps.db, who, { action: "webhook_secret_rotate", agentId, subject: agentId, at: now });
  return { webhookSecret: secret, previousValidUntil };
}
