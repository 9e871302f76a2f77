/**
 * Builds real dependencies for tests: a fresh in-memory libSQL database with the committed
 * migrations applied, a fake clock, and a scheduler that records what was published so a test
 * can deliver it when it chooses. Every test gets its own database.
 *
 * The migrations run once per test process, through drizzle's migrator as in production; each
 * database after that replays what they left (sqlite_master's tables and indexes, and the
 * migrator's own rows) as one script, in about a third of the migrator's time per database.
 */
import { createClient } from "@libsql/client";
import { openDatabase, type Db } from "../../db/client.ts";
import { applyMigrations } from "../../db/migrate.ts";
import { FakeClock } from "./fake-clock.ts";
import { parseConfig, type Config } from "../../runtime/config.ts";
import type { Deps } from "../../jobs/deps.ts";
import { silentLogger } from "./silent-logger.ts";
import { DEFAULT_AGENT, ensureAgent } from "../../pipeline/index.ts";
import { minimalRunStep } from "./minimal-run-step.ts";
import type { PublishRequest, Scheduler } from "../../pipeline/index.ts";
import { SimulatorProvider } from "../../fleet/providers/simulator.ts";

export const TEST_ADMIN_TOKEN = "test-admin-token-0123456789";
export const TEST_WEBHOOK_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/** Records publishes; dedup keys are honoured like the real schedulers do. */
export class RecordingScheduler implements Scheduler {
  readonly kind = "test" as const;
  readonly published: PublishRequest[] = [];
  private readonly seen = new Set<string>();
  async publish(request: PublishRequest): Promise<void> {
    if (this.seen.has(request.dedupKey)) return;
    this.seen.add(request.dedupKey);
    this.published.push(request);
  }
  /** Removes and returns every publish due at `now`. */
  takeDue(now: number): PublishRequest[] {
    const due = this.published.filter((p) => p.notBefore <= now);
    for (const p of due) this.published.splice(this.published.indexOf(p), 1);
    return due;
  }
}

/** A recording scheduler that refuses every publish while `down` (an unreachable QStash). */
export class FlakyScheduler extends RecordingScheduler {
  down = true;
  override async publish(request: PublishRequest): Promise<void> {
    if (this.down) throw new Error("scheduler unreachable");
    await super.publish(request);
  }
}

let migratedScript: Promise<string> | undefined;

const literal = (value: unknown): string =>
  value === null
    ? "null"
    : typeof value === "number" || typeof value === "bigint"
      ? String(value)
      : `'${String(value).replaceAll("'", "''")}'`;

/** The schema and rows the committed migrations produce, as SQL: read from a database they migrated. */
async function migrated(): Promise<string> {
  const client = createClient({ url: ":memory:" });
  await applyMigrations(openDatabase(client));
  const objects = (
    await client.execute("select type, name, sql from sqlite_master where sql is not null and name not like 'sqlite_%' order by rowid")
  ).rows;
  const script = ["begin"];
  for (const { type, name, sql } of objects) {
    script.push(String(sql));
    if (type !== "table") continue;
    for (const row of (await client.execute(`select * from "${String(name)}"`)).rows) {
      script.push(`insert into "${String(name)}" values (${Array.from(row, literal).join(", ")})`);
    }
  }
  client.close();
  return [...script, "commit"].join(";\n");
}

export async function createTestDb(): Promise<Db> {
  const client = createClient({ url: ":memory:" });
  await client.executeMultiple(await (migratedScript ??= migrated()));
  return openDatabase(client);
}

export function testConfig(vars: Record<string, string> = {}): Config {
  return parseConfig({ ADMIN_TOKEN: TEST_ADMIN_TOKEN, WEBHOOK_SECRET: TEST_WEBHOOK_SECRET, DATABASE_URL: ":memory:", ...vars }, "node");
}

export interface TestDeps extends Deps {
  clock: FakeClock;
}

export async function createTestDeps(
  overrides: Partial<Omit<Deps, "clock">> & { clock?: FakeClock; vars?: Record<string, string> } = {},
): Promise<TestDeps & { scheduler: Scheduler }> {
  const { vars, ...rest } = overrides;
  const db = rest.db ?? (await createTestDb());
  const clock = rest.clock ?? new FakeClock();
  await ensureAgent(db, DEFAULT_AGENT, clock.now());
  return {
    db,
    clock,
    config: rest.config ?? testConfig(vars),
    scheduler: rest.scheduler ?? new RecordingScheduler(),
    provider: rest.provider ?? new SimulatorProvider(db, clock),
    llm: rest.llm ?? null,
    runStep: rest.runStep ?? minimalRunStep,
    log: rest.log ?? silentLogger,
  };
}

export const authHeaders = (extra: Record<string, string> = {}) => ({
  Authorization: `Bearer ${TEST_ADMIN_TOKEN}`,
  "Content-Type": "application/json",
  ...extra,
});
