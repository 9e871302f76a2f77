/**
 * Group commit: ingests arriving together share one database batch, each keeps its own dedup
 * and debounce semantics, and one that fails never takes the others with it.
 */
import { describe, expect, it } from "vitest";
import { createClient } from "@libsql/client";
import { sql } from "drizzle-orm";
import { openDatabase } from "../../db/client.ts";
import { applyMigrations } from "../../db/migrate.ts";
import { GroupCommit } from "../../db/group-commit.ts";
import { ingestEvent, ingestStatements } from "../../pipeline/index.ts";
import { recordInstanceState } from "../../fleet/instances/instance-state.ts";
import { createTestDeps, type RecordingScheduler } from "../support/test-deps.ts";
import { countingClient } from "../support/counting-client.ts";

async function groupedDeps() {
  const { client, counter } = countingClient(createClient({ url: ":memory:" }));
  const db = openDatabase(client);
  await applyMigrations(db);
  const deps = await createTestDeps({ db });
  const groupCommit = new GroupCommit(db, { windowMs: 2, maxRequests: 64 });
  counter.reset();
  return { deps: { ...deps, groupCommit }, counter, groupCommit };
}

const message = (key: string) => ({
  agentId: "default",
  source: "human" as const,
  priority: 0 as const,
  dedupKey: key,
  payload: { text: key },
});

describe("group commit", () => {
  it("concurrent ingests share one batch; a repeated key inside the group is a duplicate; one run is requested", async () => {
    const { deps, counter, groupCommit } = await groupedDeps();
    const keys = [...Array.from({ length: 20 }, (_, i) => `message:${i}`), "message:3"];
    const results = await Promise.all(keys.map((key) => ingestEvent(deps, message(key))));
    expect(counter.calls).toBe(1);
    expect(groupCommit.stats).toMatchObject({ groups: 1, submissions: 21, fallbacks: 0 });
    expect(new Set(results.slice(0, 20).map((r) => r.eventId)).size).toBe(20);
    expect(results.slice(0, 20).every((r) => !r.duplicate)).toBe(true);
    expect(results[20]).toEqual({ eventId: results[3]!.eventId, duplicate: true });
    expect((deps.scheduler as RecordingScheduler).published.map((p) => p.body.type)).toEqual(["run"]);
  });

  it("state changes of one instance in one group keep their order: the later one wins, none is lost", async () => {
    const { deps, counter } = await groupedDeps();
    const at = deps.clock.now();
    const changes = ["loading", "running", "exited"].map((state, i) =>
      recordInstanceState(deps, {
        agentId: "default",
        instanceId: "sim-1",
        state: state as "running",
        at: at + i,
        source: "webhook",
        dedupKey: `webhook:${i}`,
      }),
    );
    const results = await Promise.all(changes);
    expect(counter.calls).toBe(1);
    expect(results.map((r) => r.outcome)).toEqual(["pending", "pending", "pending"]);
    const history = await deps.db.$client.execute("select from_state, to_state from instance_events order by id");
    expect(history.rows.map((r) => [r.from_state, r.to_state])).toEqual([
      [null, "loading"],
      ["loading", "running"],
      ["running", "exited"],
    ]);
  });

  it("a submission that fails fails alone: the rest of its group is committed and answered", async () => {
    const { deps, groupCommit } = await groupedDeps();
    const good = Array.from({ length: 5 }, (_, i) => ingestEvent(deps, message(`message:ok-${i}`)));
    const ingest = ingestStatements(deps, message("message:bad"));
    const bad = groupCommit.submit([
      ingest.insertEvent,
      ingest.stored,
      ingest.scheduleRun,
      deps.db.run(sql`insert into no_such_table values (1)`),
    ]);
    const settled = await Promise.allSettled([...good, bad]);
    expect(settled.slice(0, 5).map((s) => s.status)).toEqual(Array(5).fill("fulfilled"));
    expect(settled[5]!.status).toBe("rejected");
    expect(groupCommit.stats.fallbacks).toBe(1);
    const stored = await deps.db.$client.execute("select dedup_key from events order by id");
    expect(stored.rows.map((r) => r.dedup_key)).toEqual(Array.from({ length: 5 }, (_, i) => `message:ok-${i}`));
  });

  it("with untilQuiet, commits after a turn of the event loop that adds nobody, not at the end of the window", async () => {
    const { deps } = await groupedDeps();
    // A window no test would wait for: only the quiet turn can commit these groups.
    const groupCommit = new GroupCommit(deps.db, { windowMs: 60_000, maxRequests: 64, untilQuiet: true });
    const quiet = { ...deps, groupCommit };
    await Promise.all(Array.from({ length: 10 }, (_, i) => ingestEvent(quiet, message(`message:together-${i}`))));
    expect(groupCommit.stats).toMatchObject({ groups: 1, submissions: 10 });

    // A group that grew during a turn waits for the next: C arrives in the check phase of the
    // turn A and B arrived in, before the group is looked at, so all three share one commit.
    let c: Promise<unknown> | undefined;
    setImmediate(() => (c = ingestEvent(quiet, message("message:c"))));
    const [a, b] = [ingestEvent(quiet, message("message:a")), ingestEvent(quiet, message("message:b"))];
    await Promise.all([a, b]);
    await c;
    expect(groupCommit.stats).toMatchObject({ groups: 2, submissions: 13 });
  });
});
