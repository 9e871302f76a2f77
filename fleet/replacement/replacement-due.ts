/**
 * The tick's due-replacement check (issue #33 item 3): a run that found a dead rental "not yet"
 * (dead for less than REPLACE_AFTER_S) asks nothing more, and on a quiet fleet no later event
 * brings the agent back. So the tick files the proposal itself once the death is due, through the
 * same rule the rules policy and the LLM's tool use (fleet/replacement/replacement-proposal.ts),
 * whatever the agent's policy: approval, shadow mode, the spend gate and a human's "no" all apply.
 *
 * Bounded: once per death (a death that already has a request under its key `replace:<id>:<since>`,
 * answered, pending or refused, is not filed again here; a bound's refusal is the runs' to retry),
 * one open replacement per instance (candidates with one open are skipped), and at most
 * MAX_DUE_PER_TICK proposals per tick from at most MAX_DUE_EXAMINED candidates.
 */
import { and, eq, gt, inArray, isNull, lte, notExists, notInArray, or } from "drizzle-orm";
import type { FleetDeps } from "../deps.ts";
import { actions, instances, replacements } from "../../schema/index.ts";
import { defineTickCheck, writesNothing } from "../../pipeline/index.ts";
import { CLOSED } from "./replacement-rows.ts";
import { DEAD_STATES, deadSince, proposeReplacement } from "./replacement-proposal.ts";

/** Proposals the tick files per agent, at most (the rest wait for the next tick). */
export const MAX_DUE_PER_TICK = 5;
/** Candidates read per tick, at most. */
const MAX_DUE_EXAMINED = 50;
const GONE_WINDOW_MS = 24 * 3_600_000;

export interface DueReport {
  proposed: string[];
}

/** The death key's request, when any was filed (the key itself or one of its run retries). */
async function requested(deps: FleetDeps, agentId: string, deathKey: string): Promise<boolean> {
  const [row] = await deps.db
    .select({ id: actions.id })
    .from(actions)
    .where(
      and(
        eq(actions.agentId, agentId),
        or(
          eq(actions.idempotencyKey, deathKey),
          and(gt(actions.idempotencyKey, `${deathKey}:`), lte(actions.idempotencyKey, `${deathKey};`)),
        ),
      ),
    )
    .limit(1);
  return row !== undefined;
}

export const proposeDueReplacements = defineTickCheck({
  name: "proposeDueReplacements",
  reads(deps: FleetDeps, agentId: string, now: number) {
    const due = now - deps.config.replace.afterMs;
    const open = deps.db
      .select({ id: replacements.id })
      .from(replacements)
      .where(
        and(eq(replacements.agentId, agentId), eq(replacements.oldInstanceId, instances.id), notInArray(replacements.status, [...CLOSED])),
      );
    return {
      due: deps.db
        .select({ id: instances.id })
        .from(instances)
        .where(
          and(
            eq(instances.agentId, agentId),
            isNull(instances.replacedBy),
            or(
              and(isNull(instances.goneAt), inArray(instances.state, [...DEAD_STATES]), lte(instances.stateAt, due)),
              and(gt(instances.goneAt, now - GONE_WINDOW_MS), lte(instances.goneAt, due)),
            ),
            notExists(open),
          ),
        )
        .orderBy(instances.id)
        .limit(MAX_DUE_EXAMINED),
    };
  },
  decide(deps, agentId, rows, tick) {
    if (deps.config.replace.afterMs === 0 || rows.due.length === 0) return writesNothing<DueReport>({ proposed: [] });
    return {
      statements: [],
      async after(): Promise<DueReport> {
        const proposed: string[] = [];
        for (const { id } of rows.due) {
          if (proposed.length >= MAX_DUE_PER_TICK) break;
          if (tick.reconciled.has(id)) continue;
          const dead = await deadSince(deps, agentId, id);
          if (!dead || (await requested(deps, agentId, `replace:${id}:${dead.since}`))) continue;
          const proposal = await proposeReplacement(
            deps,
            { agentId, runId: null, decidedBy: "rules" },
            id,
            `due after ${deps.config.replace.afterMs / 1000} s with no other event`,
          );
          if (proposal.status === "proposed") proposed.push(id);
        }
        return { proposed };
      },
    };
  },
});
