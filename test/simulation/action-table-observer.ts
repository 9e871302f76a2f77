/**
 * How the action-table simulation watches its requests from outside the table: before each one
 * it notes what it knows (the mode, today's spend against the limit, its own human's rejections
 * still in their cooldown, what the run's input concerns), then asks, then reads what reached the
 * provider and what was filed, and checks the request (action-table-invariants.ts). It also counts
 * how often each gate's situation arose, so a run of seeds shows it checked something.
 */
import { and, count, eq } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import type { Config } from "../../runtime/config.ts";
import { approvals, instances } from "../../schema/index.ts";
import { DEFAULT_AGENT, type ConsumedEvent } from "../../pipeline/index.ts";
import { spendToday } from "../../fleet/economics/spend.ts";
import { needsAttention } from "../../agent/action-evidence.ts";
import type { FakeClock } from "../support/fake-clock.ts";
import type { CountingProvider } from "../actions/counting-provider.ts";
import { addsSpend, checkRequest, type Asker, type ObservedRequest } from "./action-table-invariants.ts";

export interface Exercised {
  shadowAsks: number;
  overLimitSpendingAsks: number;
  /** Over the limit, a reboot of a stopped (or exited) instance asked without a human: it starts billing. */
  overLimitRebootsOfStopped: number;
  blockedAsks: number;
  unconcernedAsks: number;
  humanAskedAgain: number;
  actsWithoutHuman: number;
  humanActs: number;
}

export const noneExercised = (): Exercised => ({
  shadowAsks: 0,
  overLimitSpendingAsks: 0,
  overLimitRebootsOfStopped: 0,
  blockedAsks: 0,
  unconcernedAsks: 0,
  humanAskedAgain: 0,
  actsWithoutHuman: 0,
  humanActs: 0,
});

type Event = Pick<ConsumedEvent, "source" | "payload">;

/** "please reboot sim-3" → the kind and instance a human message asks for. */
export function askedFor(event: Event): { kind: string; instanceId: string } | null {
  if (event.source !== "human") return null;
  const match = /^please (\w+) (sim-\d+)$/.exec(String((event.payload as { text?: unknown }).text ?? ""));
  return match ? { kind: match[1]!, instanceId: match[2]! } : null;
}

/** The instances a run's input is about: events naming them (reports, approval outcomes) and human messages. */
export function concernedBy(events: readonly Event[]): Set<string> {
  const about = new Set<string>();
  for (const e of events) {
    const id = (e.payload as { instanceId?: unknown } | null)?.instanceId;
    if (typeof id === "string") about.add(id);
    const asked = askedFor(e);
    if (asked) about.add(asked.instanceId);
  }
  return about;
}

export interface Watched {
  db: Db;
  clock: FakeClock;
  config: Config;
  provider: CountingProvider;
  shadow: boolean;
  spendLimit: number | null;
}

export class RequestObserver {
  readonly violations: string[] = [];
  readonly exercised = noneExercised();
  requests = 0;
  /** The simulated human's rejections, by "instance:kind": until when each holds. */
  private readonly rejectedUntil = new Map<string, number>();

  constructor(private readonly w: Watched) {}

  /** The simulated human rejected (or approved, which lifts its blocks) this action on this instance. */
  decided(instanceId: string, kind: string, decision: "approve" | "reject") {
    const key = `${instanceId}:${kind}`;
    if (decision === "reject") this.rejectedUntil.set(key, this.w.clock.now() + this.w.config.approvalRejectCooldownMs);
    else this.rejectedUntil.delete(key);
  }

  /** Asks (`ask` answers the status), observing what reached the provider and what was filed. */
  async observe(asker: Asker, kind: string, instanceId: string, events: readonly Event[] | null, ask: () => Promise<string>) {
    const { db, clock, config, provider, shadow, spendLimit } = this.w;
    const until = this.rejectedUntil.get(`${instanceId}:${kind}`);
    const before: Omit<ObservedRequest, "providerCalls" | "filedApprovals" | "status"> = {
      asker,
      kind,
      instanceId,
      shadow,
      overSpendLimit: spendLimit !== null && (await spendToday({ db, clock }, DEFAULT_AGENT)) >= spendLimit,
      stateBefore: await this.stateOf(instanceId),
      rejectedUntil: until !== undefined && until > clock.now() ? until : null,
      humanAskedAgain: (events ?? []).some((e) => askedFor(e)?.kind === kind && askedFor(e)?.instanceId === instanceId),
      unconcerned:
        asker === "llm" &&
        !concernedBy(events ?? []).has(instanceId) &&
        !(await needsAttention({ db, clock, config }, DEFAULT_AGENT, instanceId)),
      at: clock.now(),
    };
    const callsBefore = provider.calls.length;
    const filedBefore = await this.filed(instanceId, kind);
    const status = await ask();
    const request: ObservedRequest = {
      ...before,
      providerCalls: provider.calls.slice(callsBefore),
      filedApprovals: (await this.filed(instanceId, kind)) - filedBefore,
      status,
    };
    this.count(request);
    this.violations.push(...checkRequest(request));
  }

  private async stateOf(instanceId: string): Promise<string | null> {
    const where = and(eq(instances.agentId, DEFAULT_AGENT), eq(instances.id, instanceId));
    return (await this.w.db.select({ state: instances.state }).from(instances).where(where))[0]?.state ?? null;
  }

  private async filed(instanceId: string, kind: string): Promise<number> {
    const where = and(eq(approvals.instanceId, instanceId), eq(approvals.kind, kind));
    return (await this.w.db.select({ n: count() }).from(approvals).where(where))[0]!.n;
  }

  private count(r: ObservedRequest) {
    const x = this.exercised;
    this.requests++;
    if (r.asker === "human") {
      if (r.providerCalls.length) x.humanActs++;
      return;
    }
    if (r.shadow) x.shadowAsks++;
    if (r.overSpendLimit && r.kind === "start") x.overLimitSpendingAsks++;
    if (r.overSpendLimit && r.kind === "reboot" && addsSpend(r)) x.overLimitRebootsOfStopped++;
    if (r.rejectedUntil !== null) x.blockedAsks++;
    if (r.unconcerned) x.unconcernedAsks++;
    if (r.humanAskedAgain) x.humanAskedAgain++;
    if (r.providerCalls.length) x.actsWithoutHuman++;
  }
}
