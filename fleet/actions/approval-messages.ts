/**
 * What a person is told about an approval, at each step of its life: asked, reminded, expired,
 * decided. One home for the words, so every channel, the dashboard's notification list and the
 * Slack message that replaces the buttons say the same thing, with the instance's context and the
 * links (fleet/actions/approval-context.ts).
 */
import type { Config } from "../../runtime/config.ts";
import type { approvals } from "../../schema/index.ts";
import { describeContext, storedContext } from "./approval-context.ts";
import { approvalLink, instanceLink } from "../../notify/approval-links.ts";

type ApprovalRow = typeof approvals.$inferSelect;
/** What an approval says about itself before anyone decided it. */
export type ApprovalFacts = Pick<
  ApprovalRow,
  | "id"
  | "agentId"
  | "runId"
  | "kind"
  | "instanceId"
  | "reason"
  | "requestedBy"
  | "requestedByOperator"
  | "context"
  | "expiresAt"
  | "createdAt"
>;

export interface ApprovalMessage {
  title: string;
  body: string;
}

/** "destroy sim-1" */
export function approvalSubject(row: Pick<ApprovalRow, "kind" | "instanceId">): string {
  return `${row.kind} ${row.instanceId ?? ""}`.trim();
}

/** Who asked: the operator when a human did, else the decider (llm, rules) and its run. */
export function askedBy(row: Pick<ApprovalRow, "requestedBy" | "requestedByOperator" | "runId">): string {
  if (row.requestedByOperator) return row.requestedByOperator;
  return `${row.requestedBy}${row.runId !== null ? ` in run ${row.runId}` : ""}`;
}

/** The lines every approval message carries: instance details, why, who asked, the links. */
function details(config: Pick<Config, "publicUrl">, row: ApprovalFacts, now: number): string {
  const lines = [
    `Instance ${row.instanceId ?? "–"}: ${describeContext(storedContext(row.context), now)}`,
    `Why: ${row.reason}`,
    `Requested by ${askedBy(row)}`,
  ];
  if (row.instanceId) lines.push(`Instance: ${instanceLink(config, row.agentId, row.instanceId)}`);
  return lines.join("\n");
}

export function askedMessage(config: Pick<Config, "publicUrl">, row: ApprovalFacts, now: number): ApprovalMessage {
  return {
    title: `Approval needed: ${approvalSubject(row)}`,
    body: `${details(config, row, now)}\nDecide at ${approvalLink(config, row.agentId, row.id)}`,
  };
}

export function reminderMessage(config: Pick<Config, "publicUrl">, row: ApprovalFacts, now: number): ApprovalMessage {
  const expires = row.expiresAt !== null ? ` It expires at ${new Date(row.expiresAt).toISOString()} and then does nothing.` : "";
  return {
    title: `Reminder: approval still needed: ${approvalSubject(row)}`,
    body: `Still pending since ${new Date(row.createdAt).toISOString()}.${expires}\n${details(config, row, now)}\nDecide at ${approvalLink(config, row.agentId, row.id)}`,
  };
}

export function expiredMessage(config: Pick<Config, "publicUrl">, row: ApprovalFacts, now: number): ApprovalMessage {
  return {
    title: `Approval expired: ${approvalSubject(row)}`,
    body: `Nobody decided by ${new Date(row.expiresAt ?? now).toISOString()}, so it expired and nothing was done. Ask again if it is still needed.\n${details(config, row, now)}`,
  };
}

/** "Approved by alice: destroy 123" */
export function decidedMessage(config: Pick<Config, "publicUrl">, row: ApprovalRow, now: number): ApprovalMessage {
  const how = row.status === "approved" ? "Approved" : "Rejected";
  const note = row.note ? `\nNote: ${row.note}` : "";
  const next = row.status === "approved" && row.kind === "replace" ? `\n${REPLACE_STARTED}` : "";
  return {
    title: `${how} by ${row.decidedBy ?? "a human"}: ${approvalSubject(row)}`,
    body: `${how} by ${row.decidedBy ?? "a human"} at ${new Date(row.decidedAt ?? now).toISOString()}.${note}${next}\n${details(config, row, now)}\nSee ${approvalLink(config, row.agentId, row.id)}`,
  };
}

/**
 * Executing an approved replace only marks it approved (fleet/actions/replace-approval.ts): the
 * rent, the new instance running and the old one destroyed come later, each told when it happens
 * (fleet/replacement/replacement-told.ts). So nobody is told it "succeeded" before any of that.
 */
export const REPLACE_STARTED =
  "The replacement is approved and the search for an offer like it has started; you are told when one is rented, when it runs and when the old instance is destroyed.";

/** What the executed approval did, in words ("action succeeded"; for a replace, that its search started). */
export function executionWords(kind: string, execution: { status: string } | null): string {
  if (!execution) return "";
  if (kind === "replace" && execution.status === "succeeded") return "replacement approved: the search for an offer has started";
  return `action ${execution.status}`;
}
