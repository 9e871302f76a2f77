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

/** What a reporter key is derived from: a version, so a later scheme cannot collide with this one. */
const REPORTER_KEY_CONTEXT = "fleetwarden-reporter-v1:";

/**
 * One instance's own signing key (the reporter's FLEETWARDEN_KEY): `whsec_` + base64 of
 * HMAC-SHA256(agent secret, "fleetwarden-reporter-v1:" + instance id). It verifies reports for
 * that instance id only (a key leaked from one rental forges no other's), and it rotates with the
 * agent's secret: nothing is stored, it is derived again from each verifying secret.
 */
export async function reporterKey(agentSecret: string, instanceId: string): Promise<string> {
  const cacheKey = `${agentSecret}\u0000${instanceId}`;
  const known = derivedKeys.get(cacheKey);
  if (known) return known;
  const derived = await deriveReporterKey(agentSecret, instanceId);
  if (derivedKeys.size >= DERIVED_KEYS_MAX) derivedKeys.clear();
  derivedKeys.set(cacheKey, derived);
  return derived;
}

/**
 * Keys derived in this process, by agent secret and instance id: every report would otherwise pay
 * a key import and an HMAC before its signature is checked (a third of a report's CPU in the HTTP
 * benchmark). A rotated secret derives under its own entry; past the bound the cache starts over.
 */
const derivedKeys = new Map<string, string>();
const DERIVED_KEYS_MAX = 10_000;

async function deriveReporterKey(agentSecret: string, instanceId: string): Promise<string> {
  const encoder = new TextEncoder();
  const key = await crypto.subtle.importKey("raw", encoder.encode(agentSecret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(REPORTER_KEY_CONTEXT + instanceId)));
  return WEBHOOK_SECRET_PREFIX + btoa(String.fromCharCode(...mac));
}

/**
 * The agent's verifying secrets plus, for the instance the raw body names, that instance's own
 * keys (one per verifying secret, so a rotation's grace covers them too). The body is only peeked
 * at for its `instanceId` (it is parsed for real after the signature verifies); since the key is
 * derived from the id the signed body names, a key of instance A verifies no report about B.
 */
export async function withInstanceKeys(secrets: readonly string[], raw: string): Promise<string[]> {
  const instanceId = peekInstanceId(raw);
  if (instanceId === null) return [...secrets];
  return [...secrets, ...(await Promise.all(secrets.map((s) => reporterKey(s, instanceId))))];
}

function peekInstanceId(raw: string): string | null {
  try {
    const body: unknown = JSON.parse(raw);
    const id = body && typeof body === "object" ? (body as { instanceId?: unknown }).instanceId : undefined;
    // Trimmed as the body's schema trims it (jobs/instance-report.ts), so the key names what is stored.
    return typeof id === "string" && id.trim().length > 0 && id.length <= 256 ? id.trim() : null;
  } catch {
    return null;
  }
}
