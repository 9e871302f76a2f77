/**
 * What the agent's provider can do, asked in one place: which capability each action kind needs
 * (`replace` rents a new instance: `create`), the 501 ProviderError for one it lacks, the list the
 * API shows, and telling a human — once per instance, kind and state episode — that the rules
 * would have acted but the provider cannot. executeAction refuses a missing capability before
 * any provider call (fleet/actions/actions.ts), the agent's tools are offered only for what the provider
 * has (agent/tools/index.ts), and the rules policy asks here before it acts.
 */
import { and, eq } from "drizzle-orm";
import type { ActionKind } from "../actions/action-types.ts";
import { CAPABILITIES, unsupported, type Capability, type FleetProvider, type ProviderError } from "./provider.ts";
import { notifyHuman, type NotifyDeps } from "../../notify/notify-human.ts";
import { onceNotices } from "../../schema/index.ts";
import { fencedWrite, type RunFence } from "../../pipeline/index.ts";
import { insertWhere } from "../../db/insert-where.ts";

export const ACTION_CAPABILITY: Record<ActionKind, Capability> = {
  start: "start",
  stop: "stop",
  reboot: "reboot",
  destroy: "destroy",
  label: "label",
  replace: "create",
  rent: "create",
};

type Provider = Pick<FleetProvider, "kind" | "capabilities">;

/** The 501 error naming the provider and the capability `kind` needs, or null when it has it. */
export function lacks(provider: Provider, kind: ActionKind): ProviderError | null {
  const needed = ACTION_CAPABILITY[kind];
  return provider.capabilities.has(needed) ? null : unsupported(provider.kind, needed);
}

/** The provider's capabilities as a list, in CAPABILITIES order (the API and dashboard show it). */
export function capabilityList(provider: Provider): Capability[] {
  return CAPABILITIES.filter((c) => provider.capabilities.has(c));
}

export interface UnsupportedNotice {
  agentId: string;
  runId: number;
  fence: RunFence;
  instanceId: string;
  kind: ActionKind;
  /** What the rules would have answered (e.g. "exited"). */
  situation: string;
  /** The instance's state episode (its stateAt): a new failure is a new notice. */
  episode: number;
}

/**
 * Tells a human, once per (instance, kind, episode), that the rules would have done `kind` but
 * the provider cannot: the once-mark `unsupported:<instance>:<kind>:<episode>` is written under
 * the run's lease first, and only the run that wrote it notifies. Returns whether it notified.
 */
export async function tellUnsupportedOnce(deps: NotifyDeps & { provider: Provider }, notice: UnsupportedNotice): Promise<boolean> {
  const error = lacks(deps.provider, notice.kind);
  if (!error) return false;
  const { agentId, runId, fence, instanceId, kind } = notice;
  const key = `unsupported:${instanceId}:${kind}:${notice.episode}`;
  const marked = await fencedWrite(deps, fence, `marking the ${kind} capability notice`, (holds) =>
    insertWhere(deps.db, onceNotices, { agentId, key, notificationId: null, at: deps.clock.now() }, holds)
      .onConflictDoNothing()
      .returning({ key: onceNotices.key }),
  );
  if (marked.length === 0) return false;
  const sent = await notifyHuman(deps, {
    agentId,
    runId,
    title: `Instance ${instanceId} needs a human: the provider cannot ${kind} it`,
    body: `${instanceId} is ${notice.situation}; the rules policy would ${kind} it, but ${error.message}. Nothing was done; please take a look. You are told once for this ${notice.situation} episode.`,
    severity: "warning",
    dedupKey: key,
    instanceId,
    fence,
  });
  await deps.db
    .update(onceNotices)
    .set({ notificationId: sent.notificationId })
    .where(and(eq(onceNotices.agentId, agentId), eq(onceNotices.key, key)));
  return sent.notificationId !== null;
}
