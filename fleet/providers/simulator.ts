/**
 * The simulated fleet (provider `simulator`): instances kept in the database so they survive a
 * restart, answering actions like a real provider would. `npm start` uses it when no
 * VAST_API_KEY is set, and healthz, the API and the dashboard say so. Scripted failures (exit,
 * out-of-memory, stuck loading, host offline) are injected on demand or rolled at random; how
 * the simulated instances then report to fleetwarden lives in simulator-reports.ts.
 *
 * Economics, derived (the simulator keeps no column for them): a healthy running instance works
 * at 40-100 % GPU utilisation, a fixed value per instance and minute of the clock (so two reads in
 * the same minute agree and a seeded run repeats); one scripted `idle` works at 0 %; any other
 * state reports none. Storage costs STORAGE_GB_PER_GPU GB per GPU at STORAGE_USD_PER_GB_MONTH,
 * charged per hour while stopped. An instance is interruptible while it is `outbid`, the one
 * failure that is a higher bid stopping it.
 */
import { yieldToEventLoop } from "../../runtime/yield.ts";
import { and, asc, eq, gt, isNull, lt, or, sql } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import type { Clock } from "../../runtime/clock.ts";
import { simulatorInstances } from "../../schema/index.ts";
import {
  meetingQuery,
  ProviderError,
  tailOfLog,
  type Capability,
  type CreatedInstance,
  type InstanceSpec,
  type Offer,
  type OfferQuery,
  type FleetInstance,
  type FleetProvider,
  type InstanceLogs,
  type InstanceState,
  type LogRequest,
} from "./provider.ts";
import { lastLines, simulatedLog } from "./simulator-logs.ts";
import { FAILURES, HOST_NO_GPU_MESSAGE, ROLLED_FAILURE_KINDS, type FailureKind } from "./simulated-failures.ts";
import {
  booted,
  booting,
  createdId,
  machinesFor,
  SIM_BOOT_MS,
  SIM_BOOTING,
  simulatedDiskGb,
  simulatedMachineId,
  simulatedReliability,
  simulatedSpec,
} from "./simulator-offers.ts";

const GPUS = [
  { gpuName: "RTX 4090", gpuCount: 1, pricePerHour: 0.42 },
  { gpuName: "A100 SXM4", gpuCount: 2, pricePerHour: 2.1 },
  { gpuName: "H100 SXM", gpuCount: 8, pricePerHour: 19.6 },
  { gpuName: "RTX 3090", gpuCount: 4, pricePerHour: 0.88 },
];

/** Kept here for dashboard/, which still imports the kinds from this module. */
export { FAILURE_KINDS } from "./simulated-failures.ts";

/** Instances per list page (Vast.ai's CLI asks for 25; a page here is one database round trip). */
export const SIMULATOR_PAGE_SIZE = 100;

/** Round trips list() makes for `instances` listed instances. */
export function simulatorPages(instances: number, pageSize = SIMULATOR_PAGE_SIZE): number {
  return Math.max(1, Math.ceil(instances / pageSize));
}

/** Gaps longer than this (a host that was down) are rolled as if only this long had passed. */
const MAX_ROLL_WINDOW_MS = 3_600_000;

export interface SimulatedFailure {
  kind: FailureKind;
  instance: FleetInstance;
}

export interface RolledFailure {
  id: string;
  kind: FailureKind;
}

/** The failures whose writes (rolledFailureStatement, in the same order) changed an instance. */
export function failuresWritten(
  rolled: readonly RolledFailure[],
  written: readonly (readonly SimRow[])[],
  now: number,
): SimulatedFailure[] {
  return written.flatMap((rows, i) => rows.map((row) => ({ kind: rolled[i]!.kind, instance: toInstance(row, now) })));
}

type SimRow = typeof simulatorInstances.$inferSelect;

/** Simulated disk per GPU and its price (Vast.ai's hosts ask about $0.10-0.20 per GB-month). */
export const STORAGE_GB_PER_GPU = 100;
export const STORAGE_USD_PER_GB_MONTH = 0.15;
const HOURS_PER_MONTH = 730;

/** $/h a simulated instance costs while stopped. */
export function simulatedStoragePerHour(gpuCount: number): number {
  return Math.round(((gpuCount * STORAGE_GB_PER_GPU * STORAGE_USD_PER_GB_MONTH) / HOURS_PER_MONTH) * 10_000) / 10_000;
}

/** A small deterministic hash of a string to [0, 1): the same instance and minute, the same figure. */
function unit(key: string): number {
  let h = 2166136261;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 16777619);
  return (h >>> 0) / 2 ** 32;
}

/** GPU utilisation of a simulated instance now: 40-100 % at work, 0 % idle, none unless running. */
export function simulatedGpuUtil(row: Pick<SimRow, "id" | "state" | "failure">, now: number): number | null {
  if (row.state !== "running") return null;
  if (row.failure === "idle") return 0;
  return Math.round(40 + unit(`${row.id}:${Math.floor(now / 60_000)}`) * 60);
}

function toInstance(stored: SimRow, now: number): FleetInstance {
  // A created instance that finished booting reports running (nothing is written on a read).
  const row = booted(stored, now)
    ? { ...stored, state: "running", statusMessage: "running" }
    : booting(stored)
      ? { ...stored, startedAt: null }
      : stored;
  const outbid = row.failure === "outbid";
  return {
    id: row.id,
    state: row.state as InstanceState,
    label: row.label,
    gpuName: row.gpuName,
    gpuCount: row.gpuCount,
    pricePerHour: row.pricePerHour,
    statusMessage: row.statusMessage,
    startedAt: row.startedAt,
    gpuUtil: simulatedGpuUtil(row, now),
    diskUsedPct: row.state === "running" ? Math.round(20 + unit(row.id) * 50) : null,
    storagePerHour: simulatedStoragePerHour(row.gpuCount),
    endsAt: null,
    interruptible: outbid,
    stopReason: outbid ? "outbid" : null,
    machineId: simulatedMachineId(row),
    diskGb: simulatedDiskGb(row),
    reliability: simulatedReliability(row),
    spec: simulatedSpec(row),
  };
}

/** The simulated account's credit: about two days of the four seeded GPU types ($23/h), so a quiet fleet is not warned. */
export const SIMULATOR_BALANCE_USD = 1000;

export class SimulatorProvider implements FleetProvider {
  readonly kind = "simulator" as const;
  readonly capabilities: ReadonlySet<Capability> = new Set<Capability>([
    "start",
    "stop",
    "reboot",
    "destroy",
    "label",
    "logs",
    "telemetry",
    "create",
  ]);

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    /** Uniform in [0, 1); tests pass a seeded one so random failures are deterministic. */
    private readonly random: () => number = Math.random,
    private readonly pageSize: number = SIMULATOR_PAGE_SIZE,
  ) {}

  /** The simulated account's credit in USD (fleet/providers/account-balance.ts); tests set it. */
  balanceUsd = SIMULATOR_BALANCE_USD;

  /** What a real provider's balance call answers: the account's credit now. */
  async balance(): Promise<number> {
    return this.balanceUsd;
  }

  /** Creates `count` running instances (sim-1 … sim-N) if the simulated fleet is empty. */
  async seed(count: number): Promise<void> {
    const now = this.clock.now();
    const rows = Array.from({ length: count }, (_, i) => ({
      id: `sim-${i + 1}`,
      state: "running",
      label: `trainer-${i + 1}`,
      ...GPUS[i % GPUS.length]!,
      statusMessage: "running",
      startedAt: now,
      updatedAt: now,
    }));
    // Chunked: one INSERT's bound parameters stay under SQLite's limit for fleets of thousands.
    for (let i = 0; i < rows.length; i += 500) {
      await this.db
        .insert(simulatorInstances)
        .values(rows.slice(i, i + 500))
        .onConflictDoNothing();
    }
  }

  /**
   * The account's instances, read a page (SIMULATOR_PAGE_SIZE, ordered by id) at a time as a real
   * provider answers them, so a big simulated fleet costs what a big real one would: one round
   * trip per page (simulatorPages). Bounded: each page starts after the last id of the one before.
   */
  async list(): Promise<FleetInstance[]> {
    const listed: FleetInstance[] = [];
    for (let after = ""; ; ) {
      const page = await this.db
        .select()
        .from(simulatorInstances)
        .where(and(eq(simulatorInstances.destroyed, false), gt(simulatorInstances.id, after)))
        .orderBy(asc(simulatorInstances.id))
        .limit(this.pageSize + 1);
      const now = this.clock.now();
      listed.push(...page.slice(0, this.pageSize).map((row) => toInstance(row, now)));
      if (page.length <= this.pageSize) return listed;
      after = page[this.pageSize - 1]!.id;
      await yieldToEventLoop(); // as a real provider's next page would: requests waiting get a turn
    }
  }

  async get(id: string): Promise<FleetInstance | null> {
    const row = await this.find(id);
    return row ? toInstance(row, this.clock.now()) : null;
  }

  async start(id: string): Promise<void> {
    // The scripted `gpu_gone`: the host no longer has the GPU, as a real host answers a start.
    if ((await this.require(id)).failure === "gpu_gone") throw new ProviderError(HOST_NO_GPU_MESSAGE, 409);
    await this.transition(id, "running", "started", { failure: null, startedAt: this.clock.now() });
  }

  async stop(id: string): Promise<void> {
    await this.transition(id, "stopped", "stopped by request", { failure: null });
  }

  async reboot(id: string): Promise<void> {
    await this.transition(id, "running", "rebooted", { failure: null, startedAt: this.clock.now() });
  }

  async destroy(id: string): Promise<void> {
    await this.require(id);
    await this.db
      .update(simulatorInstances)
      .set({ destroyed: true, state: "offline", statusMessage: "destroyed", updatedAt: this.clock.now() })
      .where(eq(simulatorInstances.id, id));
  }

  async setLabel(id: string, label: string): Promise<void> {
    await this.require(id);
    await this.db.update(simulatorInstances).set({ label, updatedAt: this.clock.now() }).where(eq(simulatorInstances.id, id));
  }

  async logs(id: string, request: LogRequest): Promise<InstanceLogs> {
    const row = await this.require(id);
    const log = simulatedLog(toInstance(row, this.clock.now()), (row.failure as FailureKind | null) ?? null, this.clock.now());
    return tailOfLog(lastLines(log, request.tailLines), request.maxChars);
  }

  /** Puts the instance into the failure's state now; null when there is no such instance. */
  async injectFailure(id: string, kind: FailureKind): Promise<FleetInstance | null> {
    const now = this.clock.now();
    const [row] = await this.failureStatement(id, kind, now, false);
    return row ? toInstance(row, now) : null;
  }

  /** The write a failure makes; `onlyHealthy` (a random roll) leaves an instance that already changed alone. */
  private failureStatement(id: string, kind: FailureKind, now: number, onlyHealthy = true) {
    const failure = FAILURES[kind];
    return this.db
      .update(simulatorInstances)
      .set({ state: failure.state, statusMessage: failure.message, failure: failure.clears ? null : kind, updatedAt: now })
      .where(
        and(
          eq(simulatorInstances.id, id),
          eq(simulatorInstances.destroyed, false),
          onlyHealthy ? and(eq(simulatorInstances.state, "running"), isNull(simulatorInstances.failure)) : undefined,
        ),
      )
      .returning();
  }

  /**
   * Rolls random failures for the time since the last roll: a healthy running instance fails
   * with probability 1 - e^(-rate * hours), so the rate holds however often this is called.
   * One batch reads every healthy instance's window and claims them all with one statement (one
   * transaction, so concurrent callers — one per agent, or overlapping ticks — never roll the same
   * time twice); a second batch, only when something failed, writes just the instances that fail.
   * The cron tick runs the same three steps inside its own batches (fleet/providers/simulator-reports.ts).
   */
  async rollFailures(ratePerHour: number): Promise<SimulatedFailure[]> {
    // A quiet fleet has nothing to roll: no statement per instance per tick.
    if (ratePerHour <= 0) return [];
    const now = this.clock.now();
    const claim = this.rollClaimStatements(now);
    const [windows] = await this.db.batch([claim.windows, claim.claim]);
    const rolled = this.rollWindows(windows, ratePerHour, now);
    if (!rolled.length) return [];
    const writes = rolled.map((failure) => this.rolledFailureStatement(failure, now));
    return failuresWritten(rolled, await this.db.batch(writes as [(typeof writes)[number], ...typeof writes]), now);
  }

  /** Statements, in this order in one batch: the healthy instances' roll windows, and their claim. */
  rollClaimStatements(now: number) {
    const due = and(
      eq(simulatorInstances.destroyed, false),
      eq(simulatorInstances.state, "running"),
      isNull(simulatorInstances.failure),
      or(isNull(simulatorInstances.failuresRolledAt), lt(simulatorInstances.failuresRolledAt, now)),
    );
    return {
      windows: this.db
        .select({ id: simulatorInstances.id, since: simulatorInstances.failuresRolledAt })
        .from(simulatorInstances)
        .where(due),
      claim: this.db.update(simulatorInstances).set({ failuresRolledAt: now }).where(due),
    };
  }

  /** Which claimed windows end in a failure, and of which kind (the random part). */
  rollWindows(windows: readonly { id: string; since: number | null }[], ratePerHour: number, now: number): RolledFailure[] {
    const rolled: RolledFailure[] = [];
    for (const { id, since } of windows) {
      // The first sighting only starts the window: an instance has not been at risk before it.
      if (since === null) continue;
      const hours = Math.min(now - since, MAX_ROLL_WINDOW_MS) / 3_600_000;
      if (this.random() >= 1 - Math.exp(-ratePerHour * hours)) continue;
      rolled.push({
        id,
        kind: ROLLED_FAILURE_KINDS[Math.min(Math.floor(this.random() * ROLLED_FAILURE_KINDS.length), ROLLED_FAILURE_KINDS.length - 1)]!,
      });
    }
    return rolled;
  }

  /** The write a rolled failure makes; an instance that changed meanwhile is left alone. */
  rolledFailureStatement(failure: RolledFailure, now: number) {
    return this.failureStatement(failure.id, failure.kind, now);
  }

  /** SQL: ids of the instances that send heartbeats now (container up, host reachable; an idle one too), for a caller's statement. */
  heartbeatingIds() {
    return this.db
      .select({ id: simulatorInstances.id })
      .from(simulatorInstances)
      .where(
        and(
          eq(simulatorInstances.destroyed, false),
          eq(simulatorInstances.state, "running"),
          or(isNull(simulatorInstances.failure), eq(simulatorInstances.failure, "idle")),
        ),
      );
  }

  private async find(id: string): Promise<SimRow | null> {
    const [row] = await this.db.select().from(simulatorInstances).where(eq(simulatorInstances.id, id));
    return row && !row.destroyed ? row : null;
  }

  private async require(id: string): Promise<SimRow> {
    const row = await this.find(id);
    if (!row) throw new ProviderError(`no such instance: ${id}`, 404);
    return row;
  }

  private async transition(id: string, state: InstanceState, message: string, extra: Partial<SimRow>): Promise<void> {
    await this.require(id);
    await this.db
      .update(simulatorInstances)
      .set({ state, statusMessage: message, updatedAt: this.clock.now(), ...extra })
      .where(eq(simulatorInstances.id, id));
  }
  /** The catalogue's machines for every simulated GPU model (fleet/providers/simulator-offers.ts), filtered. */
  async offers(query: OfferQuery): Promise<Offer[]> {
    return meetingQuery(
      GPUS.flatMap((g) => machinesFor(g.gpuName, g.gpuCount, g.pricePerHour)),
      query,
    );
  }

  /** Rents the offer: a new instance on its machine, `loading` until it boots (SIM_BOOT_MS). */
  async create(offer: Offer, spec: InstanceSpec): Promise<CreatedInstance> {
    const known = GPUS.flatMap((g) => machinesFor(g.gpuName, g.gpuCount, g.pricePerHour)).find((o) => o.id === offer.id);
    if (!known?.machineId) throw new ProviderError(`no such offer: ${offer.id}`, 404);
    if (!spec.image) throw new ProviderError("create needs an image", 400);
    const now = this.clock.now();
    const [{ n }] = (await this.db.all<{ n: number }>(sql`select count(*) + 1 as n from ${simulatorInstances}`)) as [{ n: number }];
    const id = createdId(known.machineId, n);
    await this.db.insert(simulatorInstances).values({
      id,
      state: "loading",
      label: spec.label,
      gpuName: known.gpuName,
      gpuCount: known.gpuCount,
      pricePerHour: known.pricePerHour,
      statusMessage: SIM_BOOTING,
      startedAt: now + SIM_BOOT_MS,
      updatedAt: now,
    });
    return { id };
  }
}
