/**
 * The orphan sweep (issue 35, item 3): instances that cost money and nobody answers for. Two kinds:
 * - unclaimed: in the provider account, but no agent's instance filter selects them (unclaimed.ts);
 *   found by the account's sweeper (the first active agent on the account, by id) from the
 *   account's unscoped list, so one agent reports them, through its channels;
 * - ownerless: this agent's instances under an open lease whose owner (operators.name) no longer
 *   exists or is revoked; each agent reports its own, from its own rows (no provider call).
 * Each is told once per instance per UTC day with what it costs ($/h). With ORPHANS=stop each is
 * also stopped through the action table, always by a human's approval (askHuman): nobody decided
 * to rent it that fleetwarden can ask. An unclaimed instance's stop acts through the whole account
 * (ActionRequest.account, marked on the requested action for the approval), since the agent's scoped
 * provider refuses an instance outside its filter.
 * ORPHANS=none does nothing.
 *
 * What bounds it:
 * - the provider list: at most one per account per ORPHAN_LIST_EVERY_MS (10 min), failures
 *   included (the sweeper's once_notices row `orphans-listed` holds the last attempt); none at all
 *   when an agent on the account has no filter (it claims everything);
 * - notices: the once-mark `orphan:<UTC day>:<instance>`, and at most ORPHAN_NOTICES_PER_TICK (20)
 *   per tick (the rest on a later tick: ownerless ones on the next, unclaimed ones at the next list);
 * - stops: the action key `orphan-stop:<instance>:<UTC day>` (a pending approval is not filed twice;
 *   the action table's rejection cooldown holds), one per notice, and only of a running (billed)
 *   orphan: a stopped one is told with its storage cost and never asked about again.
 */
import { and, asc, eq, isNull, not } from "drizzle-orm";
import type { FleetDeps } from "../deps.ts";
import { actions, agents, instances, leases, onceNotices, operators } from "../../schema/index.ts";
import { defineTickCheck, writesNothing } from "../../pipeline/index.ts";
import { MINUTE_MS } from "../../runtime/time.ts";
import { agentSettingsSchema } from "../../runtime/agent-settings.ts";
import { executeAction } from "../actions/actions.ts";
import { keyStartsWith, onceKey, onceNoticeStatements } from "../once-notices.ts";
import { accountProvider } from "../providers/scoped-provider.ts";
import { ratePerHour, utcDay } from "../economics/spend.ts";
import { RENTED_STATES } from "../economics/instance-cost.ts";
import { openLeaseOf, ownerExists } from "./lease-expiry.ts";
import { accountOf, agentsOnAccount, claimsAll, unclaimed } from "./unclaimed.ts";

/** The list bound: one unscoped provider list per account per 10 minutes. */
export const ORPHAN_LIST_EVERY_MS = 10 * MINUTE_MS;
/** The per-tick bound on orphan notices (and the stops that go with them). */
export const ORPHAN_NOTICES_PER_TICK = 20;

export const ORPHANS_LISTED_KEY = "orphans-listed";
/** Day first, so a tick reads only today's marks (a key range), never the days before. */
export const orphanKey = (instanceId: string, day: string) => onceKey("orphan", day, instanceId);
export const orphanStopKey = (instanceId: string, day: string) => `orphan-stop:${instanceId}:${day}`;

export interface Orphan {
  instanceId: string;
  why: "unclaimed" | "ownerless";
  /** Its GPU is billed (a rented state); a stopped orphan is told with its storage cost, never stopped again. */
  billing: boolean;
  costPerHour: number;
  label: string | null;
  owner?: string;
}

export interface OrphanReport {
  listed: "listed" | "list failed" | "listed recently" | "not the sweeper" | "all claimed" | "off";
  told: Orphan[];
  stops: { instanceId: string; status: string; approvalId?: number }[];
}

export const checkOrphans = defineTickCheck({
  name: "checkOrphans",
  reads(deps: FleetDeps, agentId: string, now: number) {
    const mine = eq(onceNotices.agentId, agentId);
    return {
      agents: deps.db.select({ id: agents.id, settings: agents.settings }).from(agents).where(isNull(agents.archivedAt)),
      marks: deps.db
        .select({ key: onceNotices.key, at: onceNotices.at })
        .from(onceNotices)
        .where(and(mine, keyStartsWith(`orphan:${utcDay(now)}:`))),
      listedAt: deps.db
        .select({ at: onceNotices.at })
        .from(onceNotices)
        .where(and(mine, eq(onceNotices.key, ORPHANS_LISTED_KEY))),
      ownerless: deps.db
        .select({
          instanceId: leases.instanceId,
          owner: leases.owner,
          label: instances.label,
          state: instances.state,
          pricePerHour: instances.pricePerHour,
          storagePerHour: instances.storagePerHour,
        })
        .from(leases)
        .leftJoin(operators, and(eq(operators.name, leases.owner), isNull(operators.revokedAt)))
        .innerJoin(instances, and(eq(instances.agentId, leases.agentId), eq(instances.id, leases.instanceId), isNull(instances.goneAt)))
        .where(and(openLeaseOf(agentId), not(ownerExists())))
        .orderBy(asc(leases.endsAt))
        .limit(ORPHAN_NOTICES_PER_TICK),
    };
  },
  decide(deps, agentId, rows, tick) {
    const mode = deps.config.orphans;
    if (mode === "none") return writesNothing<OrphanReport>({ listed: "off", told: [], stops: [] });
    const day = utcDay(tick.now);
    const marked = new Set(rows.marks.map((m) => m.key));
    const ownerless: Orphan[] = rows.ownerless
      .filter((row) => !marked.has(orphanKey(row.instanceId, day)))
      .map((row) => ({
        instanceId: row.instanceId,
        why: "ownerless",
        billing: RENTED_STATES.has(row.state),
        costPerHour: ratePerHour(row),
        label: row.label,
        owner: row.owner,
      }));

    // The unclaimed ones: only the account's sweeper lists, at most once per bound.
    const mine = rows.agents.find((a) => a.id === agentId);
    const parsed = agentSettingsSchema.safeParse(mine?.settings ?? {});
    const account = accountOf(parsed.success ? parsed.data.provider : undefined, deps.config);
    const onAccount = agentsOnAccount(rows.agents, account, deps.config);
    const lastList = rows.listedAt[0]?.at;
    const listed: OrphanReport["listed"] =
      onAccount[0]?.id !== agentId
        ? "not the sweeper"
        : claimsAll(onAccount)
          ? "all claimed"
          : lastList !== undefined && tick.now - lastList < ORPHAN_LIST_EVERY_MS
            ? "listed recently"
            : "listed";
    if (ownerless.length === 0 && listed !== "listed") return writesNothing<OrphanReport>({ listed, told: [], stops: [] });

    return {
      statements: [],
      async after() {
        let found = ownerless;
        let status: OrphanReport["listed"] = listed;
        if (listed === "listed") {
          const list = await listAccount(deps, agentId, tick.now);
          if (list === null) status = "list failed";
          else
            found = [
              ...found,
              ...unclaimed(list, onAccount)
                .filter((i) => !marked.has(orphanKey(i.id, day)))
                .map((i) => ({
                  instanceId: i.id,
                  why: "unclaimed" as const,
                  billing: RENTED_STATES.has(i.state),
                  costPerHour: ratePerHour({ state: i.state, pricePerHour: i.pricePerHour, storagePerHour: i.storagePerHour ?? null }),
                  label: i.label,
                })),
            ];
        }
        const told = found.slice(0, ORPHAN_NOTICES_PER_TICK);
        await tellOrphans(deps, agentId, told, day, mode === "stop");
        const stops: OrphanReport["stops"] = [];
        if (mode === "stop") for (const orphan of told.filter((o) => o.billing)) stops.push(await stopOrphan(deps, agentId, orphan, day));
        if (told.length > 0) deps.log.info("orphan sweep told a human", { agentId, told: told.length, stops: stops.length });
        return { listed: status, told, stops };
      },
    };
  },
});

/** The account's unscoped list, the attempt marked first (a failing provider is still asked once per bound); null on failure. */
async function listAccount(deps: FleetDeps, agentId: string, now: number) {
  await deps.db
    .insert(onceNotices)
    .values({ agentId, key: ORPHANS_LISTED_KEY, notificationId: null, at: now })
    .onConflictDoUpdate({ target: [onceNotices.agentId, onceNotices.key], set: { at: now } });
  try {
    return await accountProvider(deps.provider).list();
  } catch (err) {
    deps.log.error("orphan sweep could not list the provider account", { agentId, error: String(err) });
    return null;
  }
}

/** The notices and their once-marks in one batch (the marks were read in the tick's snapshot). */
async function tellOrphans(deps: FleetDeps, agentId: string, orphans: readonly Orphan[], day: string, stopping: boolean) {
  if (orphans.length === 0) return;
  const notices = orphans.map((o) =>
    onceNoticeStatements(deps, agentId, {
      key: orphanKey(o.instanceId, day),
      title: `Orphan instance ${o.instanceId} costs $${o.costPerHour.toFixed(2)}/h`,
      body: `${describe(o)} It costs $${o.costPerHour.toFixed(2)}/h. ${
        stopping && o.billing
          ? "ORPHANS=stop: stopping it waits for a human's approval."
          : stopping
            ? "It is not running (ORPHANS=stop stops only a running one); stop paying for its disk by destroying it at the provider if nothing on it is needed."
            : "Nothing is done about it (ORPHANS=tell); stop or destroy it at the provider, or claim it with an agent's instance filter."
      } Told once a day while it lasts.`,
      severity: "warning",
      instanceId: o.instanceId,
    }),
  );
  const statements = notices.flatMap((n) => n.statements);
  try {
    const results = await deps.db.batch(statements as unknown as [(typeof statements)[number]]);
    let at = 0;
    for (const notice of notices) {
      await notice.after(results.slice(at, at + notice.statements.length) as never);
      at += notice.statements.length;
    }
  } catch (err) {
    // Another tick marked one of them first: the batch rolled back whole, the next tick tells the rest.
    deps.log.error("orphan notices not sent", { agentId, error: String(err) });
  }
}

function describe(o: Orphan): string {
  const label = o.label ? ` (label ${o.label})` : "";
  return o.why === "unclaimed"
    ? `Instance ${o.instanceId}${label} is in the provider account, but no agent's instance filter claims it, so nobody watches it.`
    : `Instance ${o.instanceId}${label} is held under a lease whose owner ${o.owner} no longer exists.`;
}

/** The stop, by a human's approval; an unclaimed instance's through the whole account. */
async function stopOrphan(deps: FleetDeps, agentId: string, orphan: Orphan, day: string) {
  const result = await executeAction(deps, {
    agentId,
    runId: null,
    instanceId: orphan.instanceId,
    kind: "stop",
    decidedBy: "rules",
    idempotencyKey: orphanStopKey(orphan.instanceId, day),
    reason: `ORPHANS=stop: ${describe(orphan)} It costs $${orphan.costPerHour.toFixed(2)}/h.`,
    askHuman: "an orphan instance: nobody who rented it can be asked, so a human decides whether it stops",
    ...(orphan.why === "unclaimed" ? { account: true as const } : {}),
  });
  // The approval is carried out through the whole account too: the mark on the requested action
  // tells decideApproval so (set again on every repeat, so a crash before it is repaired by the next tick).
  if (orphan.why === "unclaimed" && result.status === "awaiting_approval" && result.actionId > 0)
    await deps.db
      .update(actions)
      .set({ result: { account: true } })
      .where(and(eq(actions.agentId, agentId), eq(actions.id, result.actionId), eq(actions.status, "awaiting_approval")));
  return {
    instanceId: orphan.instanceId,
    status: result.status,
    ...(result.approvalId !== undefined ? { approvalId: result.approvalId } : {}),
  };
}
