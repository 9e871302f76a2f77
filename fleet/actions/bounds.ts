/**
 * The run and hour bounds on what the agent can do (issue #22), decided inside the statement that
 * records each attempt so concurrent callers cannot slip under them:
 * - provider actions: at most LLM_ACTIONS_PER_RUN per run decided by the LLM, and ACTIONS_PER_HOUR
 *   per agent decided by the LLM or the rules policy (all instances); a human's decision is exempt.
 *   Counted like the per-instance rate limit: actions that reached the provider, are pending, or
 *   were proposed in shadow mode (so shadow mode shows what acting would have done).
 * - approval requests: at most APPROVALS_PER_RUN per run and APPROVALS_PER_HOUR per agent.
 * A refused attempt is recorded as `refused` with its reason (the model reads it), and a human is
 * told once per run (`tellBoundOnce`, once-mark `bound:<runId>:<kind>`). Notifications have their
 * own bounds below fleet (notify/notification-bounds.ts).
 */
import { and, eq, gt, sql, type SQL } from "drizzle-orm";
import type { FleetDeps } from "../deps.ts";
import { HOUR_MS } from "../../runtime/time.ts";
import { actions, approvals } from "../../schema/index.ts";
import type { ActionRequest } from "./action-types.ts";
import { tellBoundOnce } from "../../notify/notify-human.ts";

type Config = Pick<FleetDeps, "config">;

/** What the action's row counts as: it reached (or would reach) the provider. */
export const reachedProvider = sql`(${actions.status} in ('pending', 'proposed') or json_extract(${actions.result}, '$.providerCalled') = 1)`;

/** SQL for the claimed row's status and error: `go` under the bounds, `refused` with a reason past one. */
export function actionBound(deps: Config, request: ActionRequest, now: number, go: SQL): { status: SQL; error: SQL } {
  const { llmActionsPerRun, actionsPerHour } = deps.config.bounds;
  const perRun = request.decidedBy === "llm" && request.runId !== null;
  const inRun = sql`(select count(*) from ${actions} where ${actions.agentId} = ${request.agentId} and ${actions.runId} = ${request.runId ?? -1}
    and ${actions.decidedBy} = 'llm' and ${reachedProvider})`;
  const inHour = sql`(select count(*) from ${actions} where ${actions.agentId} = ${request.agentId} and ${actions.createdAt} > ${now - HOUR_MS}
    and ${actions.decidedBy} in ('llm', 'rules') and ${reachedProvider})`;
  const runFull = perRun ? sql`${inRun} >= ${llmActionsPerRun}` : sql`0`;
  const hourFull = request.decidedBy === "human" ? sql`0` : sql`${inHour} >= ${actionsPerHour}`;
  return {
    status: sql`case when ${runFull} or ${hourFull} then 'refused' else ${go} end`,
    error: sql`case when ${runFull} then ${ACTIONS_RUN_REFUSAL(llmActionsPerRun)} when ${hourFull} then ${ACTIONS_HOUR_REFUSAL(actionsPerHour)} else null end`,
  };
}

const ACTIONS_RUN_REFUSAL = (n: number) =>
  `refused: this run already made ${n} provider actions (LLM_ACTIONS_PER_RUN); nothing was done. Do not try more actions in this run: tell a human what else you would do`;
const ACTIONS_HOUR_REFUSAL = (n: number) =>
  `refused: this agent made ${n} provider actions in the last hour (ACTIONS_PER_HOUR, LLM and rules together); nothing was done. Tell a human what else you would do`;

/** SQL for an approval request's row: `awaiting_approval` under the bounds, `refused` with a reason past one. */
export function approvalBound(deps: Config, request: ActionRequest, now: number): { status: SQL; error: SQL } {
  const { approvalsPerRun, approvalsPerHour } = deps.config.bounds;
  const inRun = sql`(select count(*) from ${approvals} where ${and(eq(approvals.agentId, request.agentId), eq(approvals.runId, request.runId ?? -1))})`;
  const inHour = sql`(select count(*) from ${approvals} where ${and(eq(approvals.agentId, request.agentId), gt(approvals.createdAt, now - HOUR_MS))})`;
  const runFull = request.runId !== null ? sql`${inRun} >= ${approvalsPerRun}` : sql`0`;
  const hourFull = sql`${inHour} >= ${approvalsPerHour}`;
  return {
    status: sql`case when ${runFull} or ${hourFull} then 'refused' else 'awaiting_approval' end`,
    error: sql`case when ${runFull} then ${`refused: this run already filed ${approvalsPerRun} approval requests (APPROVALS_PER_RUN); nothing was filed`}
      when ${hourFull} then ${`refused: this agent filed ${approvalsPerHour} approval requests in the last hour (APPROVALS_PER_HOUR); nothing was filed`} else null end`,
  };
}

/** True for a refusal by an hour's bound (ACTIONS_PER_HOUR, APPROVALS_PER_HOUR): asking again within the hour is refused again. */
export const refusedForTheHour = (error: string | null) => /\((ACTIONS|APPROVALS)_PER_HOUR[,)]/.test(error ?? "");

/** Tells a human once per run that a bound refused this request (and logs every refusal). */
export async function tellRefused(
  deps: Pick<FleetDeps, "db" | "clock" | "config" | "scheduler" | "log">,
  request: ActionRequest,
  kind: "actions" | "approvals",
  error: string,
) {
  deps.log.info("refused by a bound", {
    agentId: request.agentId,
    runId: request.runId,
    instanceId: request.instanceId,
    kind: request.kind,
    bound: kind,
    error,
  });
  await tellBoundOnce(deps, {
    agentId: request.agentId,
    runId: request.runId,
    fence: request.fence,
    kind,
    detail: `${error}. First refused: ${request.kind} ${request.instanceId} (decided by ${request.decidedBy}${request.model ? `, ${request.model}` : ""}).`,
  });
}
