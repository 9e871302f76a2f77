/**
 * Read model of the overview's first steps (issue #38, item 5): what a new install still has to do
 * before fleetwarden supervises a real fleet, each step done by a fact fleetwarden can see, so the
 * box never nags about a step that is done and disappears once all are:
 * - `provider`: a real provider is configured (the provider is not the simulator);
 * - `reporter`: a live instance has reported by webhook (instances.reportsByWebhook), and not as
 *   the simulator's own heartbeat: on the simulator only an instance it does not list (one that
 *   made itself known by webhook, `webhookOnly`) counts;
 * - `channel`: the agent has a Slack, Discord or ntfy channel (its effective settings).
 */
import { and, eq, isNull } from "drizzle-orm";
import type { Deps } from "../deps.ts";
import { instances } from "../../schema/index.ts";
import { configuredChannels } from "../../notify/notify-human.ts";

export const FIRST_STEPS = ["provider", "reporter", "channel"] as const;
export type FirstStep = (typeof FIRST_STEPS)[number];

export interface FirstSteps {
  /** The steps still to do, in order; empty once all are done. */
  todo: FirstStep[];
}

export async function loadFirstSteps(deps: Pick<Deps, "db" | "provider" | "config">, agentId: string): Promise<FirstSteps> {
  const simulated = deps.provider.kind === "simulator";
  const reporting = and(
    eq(instances.agentId, agentId),
    eq(instances.reportsByWebhook, true),
    isNull(instances.goneAt),
    simulated ? eq(instances.webhookOnly, true) : undefined,
  );
  const [reported] = await deps.db.select({ id: instances.id }).from(instances).where(reporting).limit(1);
  const done: Record<FirstStep, boolean> = {
    provider: !simulated,
    reporter: reported !== undefined,
    channel: configuredChannels(deps).length > 0,
  };
  return { todo: FIRST_STEPS.filter((step) => !done[step]) };
}
