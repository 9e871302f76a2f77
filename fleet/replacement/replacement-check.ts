/**
 * The tick's replacement check, the replacement's only stepper: every open replacement of the
 * agent moves on by at most one step per tick (fleet/replacement/replacement.ts), after the tick's
 * write batch. Approving a replacement only marks it approved (fleet/actions/replace-approval.ts);
 * the create happens here. Overlapping ticks are safe: each step claims the row first. An awaiting one follows its
 * approval: rejected or expired closes it (a human's "no" sticks: fleet/replacement/replacement-proposal.ts);
 * a proposal whose request was never filed (a crash between the two) is cancelled after a lease.
 * Bounded: at most MAX_STEPS_PER_TICK replacements per tick, one step each, one create ever per row.
 */
import { and, asc, eq, notInArray } from "drizzle-orm";
import type { FleetDeps } from "../deps.ts";
import { approvals, replacements } from "../../schema/index.ts";
import { defineTickCheck } from "../../pipeline/index.ts";
import { CLOSED, IN_FLIGHT, type ReplacementRow } from "./replacement-rows.ts";
import { stepReplacement, type StepOutcome } from "./replacement.ts";

export const MAX_STEPS_PER_TICK = 10;

export interface ReplacementsReport {
  steps: { id: number; outcome: StepOutcome | "error" }[];
  closed: number[];
}

export const checkReplacements = defineTickCheck({
  name: "checkReplacements",
  reads(deps: FleetDeps, agentId: string) {
    return {
      open: deps.db
        .select({ row: replacements, approval: approvals.status })
        .from(replacements)
        .leftJoin(approvals, eq(approvals.id, replacements.approvalId))
        .where(and(eq(replacements.agentId, agentId), notInArray(replacements.status, [...CLOSED])))
        .orderBy(asc(replacements.id))
        .limit(MAX_STEPS_PER_TICK),
    };
  },
  decide(deps, _agentId, rows, tick) {
    const closed: number[] = [];
    const statements = rows.open.flatMap(({ row, approval }) => {
      const to =
        row.status === "awaiting_approval" && (approval === "rejected" || approval === "expired")
          ? approval
          : row.status === "proposed" && row.updatedAt < tick.now - deps.config.runLeaseMs
            ? "cancelled"
            : null;
      if (!to) return [];
      closed.push(row.id);
      const error = to === "cancelled" ? "interrupted before its approval was asked" : `the approval was ${to}`;
      return [
        deps.db
          .update(replacements)
          .set({ status: to, error, updatedAt: tick.now, finishedAt: tick.now })
          .where(and(eq(replacements.id, row.id), eq(replacements.status, row.status))),
      ];
    });
    const moving: ReplacementRow[] = rows.open.map((o) => o.row).filter((r) => (IN_FLIGHT as readonly string[]).includes(r.status));
    return {
      statements,
      async after(): Promise<ReplacementsReport> {
        const steps: ReplacementsReport["steps"] = [];
        for (const row of moving) {
          try {
            steps.push({ id: row.id, outcome: await stepReplacement(deps, row) });
          } catch (err) {
            deps.log.error("replacement step failed", { agentId: row.agentId, replacementId: row.id, error: String(err) });
            steps.push({ id: row.id, outcome: "error" });
          }
        }
        return { steps, closed };
      },
    };
  },
});
