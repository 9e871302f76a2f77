/**
 * The links a notification about an approval carries: the approval page and the instance page,
 * absolute under PUBLIC_URL when it is set (a notification is read outside the dashboard), else
 * relative paths. The agent is always named (`?agent=`), so a link sent for one agent never opens
 * another's page. Here, not in fleet/, because the channels (Slack's text, ntfy's view action) and
 * the approval messages both need them.
 */
import type { Config } from "../runtime/config.ts";

function link(config: Pick<Config, "publicUrl">, path: string, agentId: string): string {
  return `${(config.publicUrl ?? "").replace(/\/$/, "")}${path}?agent=${encodeURIComponent(agentId)}`;
}

export function instanceLink(config: Pick<Config, "publicUrl">, agentId: string, instanceId: string): string {
  return link(config, `/fleet/${encodeURIComponent(instanceId)}`, agentId);
}

export function approvalLink(config: Pick<Config, "publicUrl">, agentId: string, approvalId: number): string {
  return `${link(config, "/approvals", agentId)}#approval-${approvalId}`;
}
