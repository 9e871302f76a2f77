/**
 * An instance's signed report (POST /webhooks/:agent/instances), from the door to the store:
 * the signature is checked on the raw body with the agent's own secrets before anything is
 * parsed or written (auth/webhook-secrets.ts: a report signed for one agent verifies for no
 * other; an unknown agent is checked against WEBHOOK_SECRET, then 404, so the route does not tell
 * who exists); then the body, the agent's state, and its instanceFilter:
 * - `ids`: a report for an id the filter does not list is 403 naming the filter, unless it is the
 *   agent's own rental (stored with its `fw-own:<agent>:` label: fleet/providers/scoped-provider.ts);
 * - `labelPrefix`: only an instance the provider listed with a matching label (403 otherwise: an
 *   id never listed has no label to match);
 * - no filter: an id the agent has never stored is kept as webhook-only (schema/fleet.ts), at
 *   most WEBHOOK_ONLY_INSTANCES_MAX per agent (429 naming the cap for a new id past it; those
 *   already kept go on reporting; a new id past the cap that the provider does list is stored as
 *   its instance, after one provider call).
 * The filter and cap are checked inside the report's one batch (no extra round trip); refused,
 * the batch wrote nothing, and one read says why.
 * Flood bound (issue #37 item 8e, fleet/instances/report-flood.ts): past REPORTS_STORED_PER_MINUTE
 * reports of one instance in a minute, a report of an instance already stored only updates its
 * row (the newest state wins) and is answered 202 with a note, storing no event, telemetry or history row.
 */
import { and, eq } from "drizzle-orm";
import { z } from "zod";
import type { Deps } from "./deps.ts";
import { RequestError } from "./errors.ts";
import { parseJsonBody } from "./validate.ts";
import { withAgent } from "./with-agent.ts";
import { plainText } from "../runtime/plain-text.ts";
import { verifyingSecrets, verifySignedReport, withInstanceKeys } from "../auth/webhook-secrets.ts";
import { recordInstanceReport, type RecordedChange, type ReportAdmission, type StateChange } from "../fleet/instances/instance-state.ts";
import { keepNewestState, pastFloodBound } from "../fleet/instances/report-flood.ts";
import { INSTANCE_STATES } from "../fleet/providers/provider.ts";
import { instances } from "../schema/index.ts";
import { ownLabelPrefix } from "../runtime/agent-settings.ts";

export const instanceReport = z
  .object({
    instanceId: plainText(z.string().trim().min(1).max(128)),
    state: z.enum(INSTANCE_STATES),
    at: z.iso.datetime({ offset: true }).optional(),
    message: plainText(z.string().max(2000)).optional(),
    gpuUtil: z.number().min(0).max(100).optional(),
    diskUsedPct: z.number().min(0).max(100).optional(),
    /** A counter that grows while useful work happens (steps, samples, tokens): stall detection reads it. */
    progress: z.number().nonnegative().max(Number.MAX_SAFE_INTEGER).optional(),
    reason: z.enum(["outbid"]).optional(),
  })
  .refine((r) => r.reason === undefined || r.state === "stopped", {
    path: ["reason"],
    message: "outbid is a reason for state stopped only",
  });

/** How far ahead of our clock a report's `at` may be (the signature's own tolerance). */
export const MAX_REPORT_AHEAD_MS = 5 * 60_000;

/** A report past the flood bound: the instance's row took it, nothing else was stored. */
export interface CappedReport {
  eventId: null;
  duplicate: false;
  outcome: "capped";
  note: string;
}

export interface SignedDelivery {
  raw: string;
  headers: { "webhook-id": string; "webhook-timestamp": string; "webhook-signature": string };
}

export async function acceptInstanceReport(deps: Deps, agentId: string, delivery: SignedDelivery): Promise<RecordedChange | CappedReport> {
  const webhookId = delivery.headers["webhook-id"];
  if (webhookId.length > 256) throw new RequestError(400, "invalid header webhook-id: longer than 256 characters");
  const scope = await withAgent(deps, agentId);
  const now = deps.clock.now();
  const secrets = scope
    ? verifyingSecrets(scope.agent, deps.config.webhookSecret, now)
    : [deps.config.webhookSecret].filter((s): s is string => Boolean(s));
  // The agent's secrets, or the reported instance's own reporter key (auth/webhook-secrets.ts).
  verifySignedReport(await withInstanceKeys(secrets, delivery.raw), delivery.raw, delivery.headers);
  const report = parseJsonBody(delivery.raw, instanceReport);
  const at = report.at ? Date.parse(report.at) : undefined;
  if (at !== undefined && at > now + MAX_REPORT_AHEAD_MS) {
    throw new RequestError(400, `invalid body: at: more than 5 minutes in the future (now is ${new Date(now).toISOString()})`);
  }
  if (!scope) throw new RequestError(404, `unknown agent: ${agentId}`);
  if (scope.archived) throw new RequestError(409, `agent ${agentId} is archived`);
  const filter = scope.settings.instanceFilter;
  if (filter?.ids && !filter.ids.includes(report.instanceId) && !(await ownRental(deps, agentId, report.instanceId))) {
    throw new RequestError(403, `instance ${report.instanceId} is outside agent ${agentId}'s instanceFilter (ids): nothing stored`);
  }
  const admission: ReportAdmission = { labelPrefix: filter?.labelPrefix ?? null, webhookOnlyMax: deps.config.webhookOnlyInstancesMax };
  const change = {
    agentId,
    instanceId: report.instanceId,
    state: report.state,
    at,
    message: report.message ?? null,
    source: "webhook",
    dedupKey: `webhook:${webhookId}`,
    telemetry: { gpuUtil: report.gpuUtil, diskUsedPct: report.diskUsedPct, progress: report.progress, source: "webhook" },
    reason: report.reason ?? null,
  } satisfies StateChange;
  const newest = {
    agentId,
    instanceId: report.instanceId,
    state: report.state,
    message: change.message,
    at: at ?? now,
    now,
    gpuUtil: report.gpuUtil ?? null,
  };
  if (pastFloodBound(scope.deps, agentId, report.instanceId, now) && (await keepNewestState(scope.deps, newest))) {
    return {
      eventId: null,
      duplicate: false,
      outcome: "capped",
      note: `instance ${report.instanceId} already stored ${deps.config.reportsStoredPerMinute} reports this minute (REPORTS_STORED_PER_MINUTE): its latest state was updated, no event or telemetry stored`,
    };
  }
  const recorded = await recordInstanceReport(scope.deps, change, admission);
  if (recorded) return recorded;
  const refused = await refusal(deps, agentId, report.instanceId, admission);
  // Past the cap, a new id the provider does list (reported before reconciliation saw it) is no
  // webhook-only instance: one provider call, on this path only, and it is stored as the provider's.
  if (refused.status === 429 && (await listedByProvider(scope.deps, report.instanceId))) {
    const stored = await recordInstanceReport(scope.deps, change, { ...admission, listed: true });
    if (stored) return stored;
  }
  throw refused;
}

/** Whether the agent stored this instance as its own rental (an ids filter claims those by label). */
async function ownRental(deps: Deps, agentId: string, instanceId: string): Promise<boolean> {
  const [row] = await deps.db
    .select({ label: instances.label })
    .from(instances)
    .where(and(eq(instances.agentId, agentId), eq(instances.id, instanceId)));
  return row !== undefined && (row.label ?? "").startsWith(ownLabelPrefix(agentId));
}

async function listedByProvider(deps: Deps, instanceId: string): Promise<boolean> {
  try {
    return (await deps.provider.get(instanceId)) !== null;
  } catch (err) {
    deps.log.error("instance report: could not ask the provider about an unknown instance", { instanceId, error: String(err) });
    return false;
  }
}

/** Why the batch stored nothing: the label filter, or the cap on webhook-only instances. */
async function refusal(deps: Deps, agentId: string, instanceId: string, admission: ReportAdmission): Promise<RequestError> {
  if (admission.labelPrefix !== null) {
    const [row] = await deps.db
      .select({ label: instances.label })
      .from(instances)
      .where(and(eq(instances.agentId, agentId), eq(instances.id, instanceId)));
    if (!row || !(row.label ?? "").startsWith(admission.labelPrefix)) {
      const why = row ? "its label does not start with it" : "the provider has not listed it with such a label";
      return new RequestError(
        403,
        `instance ${instanceId} is outside agent ${agentId}'s instanceFilter (labelPrefix "${admission.labelPrefix}": ${why}): nothing stored`,
      );
    }
  }
  return new RequestError(
    429,
    `instance ${instanceId} is not listed by the provider and agent ${agentId} already keeps ${admission.webhookOnlyMax} webhook-only instances (WEBHOOK_ONLY_INSTANCES_MAX): nothing stored`,
  );
}
