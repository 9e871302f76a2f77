/**
 * Each agent's own webhook secret, bound to the agent: the secret that signs an instance's
 * reports to /webhooks/:agent/instances verifies that agent's route only, so a report captured
 * (or a box rooted) for one agent forges nothing for another. An agent created through the API
 * gets `whsec_` + base64(32 random bytes), shown once; a rotation keeps the previous secret
 * verifying until its grace ends (WEBHOOK_SECRET_GRACE_S). The `default` agent, and an agent with
 * no secret of its own (made before secrets were per agent), verify with WEBHOOK_SECRET.
 * Signatures are Standard Webhooks' (`id.timestamp.body`, five minutes' tolerance).
 */
import { Webhook, WebhookVerificationError } from "standardwebhooks";
import { RequestError } from "../runtime/errors.ts";

export const WEBHOOK_SECRET_PREFIX = "whsec_";

/** A new secret: `whsec_` + base64 of 32 random bytes, as Standard Webhooks' libraries take it. */
export function newWebhookSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return WEBHOOK_SECRET_PREFIX + btoa(String.fromCharCode(...bytes));
}

/** What an agent row says about its secrets (schema/agents.ts). */
export interface AgentSecrets {
  id: string;
  webhookSecret: string | null;
  webhookSecretPrevious: string | null;
  webhookSecretPreviousUntil: number | null;
}

/**
 * The secrets that verify this agent's reports now: its own (WEBHOOK_SECRET when it has none),
 * and while a rotation's grace lasts the one before it (WEBHOOK_SECRET if it had none before).
 */
export function verifyingSecrets(agent: AgentSecrets, environmentSecret: string | undefined, now: number): string[] {
  const current = agent.webhookSecret ?? environmentSecret;
  const inGrace = agent.webhookSecretPreviousUntil !== null && agent.webhookSecretPreviousUntil > now;
  const previous = inGrace ? (agent.webhookSecretPrevious ?? environmentSecret) : undefined;
  return [current, previous].filter((s, i, all): s is string => Boolean(s) && all.indexOf(s) === i);
}

/**
 * Verifies a signed report against the agent's secrets: 503 when none is configured, 401 naming
 * the reason when none verifies (the message never names or hints at a secret).
 */
export function verifySignedReport(secrets: readonly string[], raw: string, headers: Record<string, string>): void {
  if (!secrets.length) throw new RequestError(503, "webhooks are disabled: WEBHOOK_SECRET is not configured");
  let reason = "no matching signature found";
  for (const secret of secrets) {
    try {
      new Webhook(secret).verify(raw, headers, { jsonParse: false });
      return;
    } catch (err) {
      if (!(err instanceof WebhookVerificationError)) throw err;
      reason = err.message;
    }
  }
  throw new RequestError(401, `webhook signature rejected: ${reason}`);
}
