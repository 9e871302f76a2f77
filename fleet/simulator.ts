/**
 * The simulated fleet (provider `simulator`): instances kept in the database so they survive a
 * restart, answering actions like a real provider would. `npm start` uses it when no
 * VAST_API_KEY is set, and healthz, the API and the dashboard say so.
 */
import { eq } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import type { Clock } from "../runtime/clock.ts";
import { simulatorInstances } from "../schema/index.ts";
import { ProviderError, type FleetInstance, type FleetProvider, type InstanceState } from "./provider.ts";

const GPUS = [
  { gpuName: "RTX 4090", gpuCount: 1, pricePerHour: 0.42 },
  { gpuName: "A100 SXM4", gpuCount: 2, pricePerHour: 2.1 },
  { gpuName: "H100 SXM", gpuCount: 8, pricePerHour: 19.6 },
  { gpuName: "RTX 3090", gpuCount: 4, pricePerHour: 0.88 },
];

type SimRow = typeof simulatorInstances.$inferSelect;

function toInstance(row: SimRow): FleetInstance {
  return {
    id: row.id,
    state: row.state as InstanceState,
    label: row.label,
    gpuName: row.gpuName,
    gpuCount: row.gpuCount,
    pricePerHour: row.pricePerHour,
    statusMessage: row.statusMessage,
    startedAt: row.startedAt,
  };
}

export class SimulatorProvider implements FleetProvider {
  readonly kind = "simulator" as const;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

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
    if (rows.length) await this.db.insert(simulatorInstances).values(rows).onConflictDoNothing();
  }

  async list(): Promise<FleetInstance[]> {
    const rows = await this.db.select().from(simulatorInstances).where(eq(simulatorInstances.destroyed, false));
    return rows.map(toInstance);
  }

  async get(id: string): Promise<FleetInstance | null> {
    const row = await this.find(id);
    return row ? toInstance(row) : null;
  }

  async start(id: string): Promise<void> {
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
}
