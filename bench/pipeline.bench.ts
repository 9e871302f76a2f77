/**
 * Pipeline benchmarks: the one-batch ingest against the same work done as separate statements,
 * on embedded libSQL and on a client that adds 2 ms per round trip (a remote Turso database is
 * one HTTP round trip per call, usually more); and a burst of events ending in runs (debounced:
 * one run; the predecessor's shape: one run per event).
 */
import type { Client } from "@libsql/client";
import { openDatabase } from "../db/client.ts";
import { and, eq, gt, isNull, or, sql } from "drizzle-orm";
import { ingestEvent } from "../pipeline/index.ts";
import { listRuns } from "../pipeline/index.ts";
import { agents, events } from "../schema/index.ts";
import { createTestDb, createTestDeps, type RecordingScheduler } from "../test/support/test-deps.ts";
import { deliverDue } from "../test/support/drive.ts";
import { fmtMs, measure, type Row } from "./harness.ts";

async function ingestSequential(deps: Awaited<ReturnType<typeof createTestDeps>>, i: number) {
  const now = deps.clock.now();
  const target = now + deps.config.debounceStateMs;
  const [row] = await deps.db
    .insert(events)
    .values({ agentId: "default", source: "webhook", priority: 1, dedupKey: `seq:${i}`, payload: { i }, createdAt: now })
    .onConflictDoNothing()
    .returning({ id: events.id });
  if (!row)
    await deps.db
      .select()
      .from(events)
      .where(and(eq(events.agentId, "default"), eq(events.dedupKey, `seq:${i}`)));
  const [moved] = await deps.db
    .update(agents)
    .set({ nextRunAt: target, runSlot: sql`${agents.runSlot} + 1` })
    .where(and(eq(agents.id, "default"), or(isNull(agents.nextRunAt), gt(agents.nextRunAt, target))))
    .returning({ slot: agents.runSlot });
  if (moved)
    await deps.scheduler.publish({
      dedupKey: `run:default:${moved.slot}`,
      notBefore: target,
      body: { type: "run", agentId: "default", slot: moved.slot },
    });
}

/** A client that counts round trips and optionally waits `latencyMs` on each, like a remote database. */
function remote(client: Client, latencyMs: number, trips: { n: number }): Client {
  return new Proxy(client, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if ((prop !== "execute" && prop !== "batch") || typeof value !== "function") return value;
      return async (...args: unknown[]) => {
        trips.n++;
        if (latencyMs) await new Promise((r) => setTimeout(r, latencyMs));
        return value.apply(target, args);
      };
    },
  });
}

async function depsWith(latencyMs: number, trips: { n: number }) {
  const db = await createTestDb();
  const deps = await createTestDeps({ db });
  return { ...deps, db: openDatabase(remote(db.$client, latencyMs, trips)) };
}

export async function pipelineBench(): Promise<Row[]> {
  const rows: Row[] = [];
  for (const latencyMs of [0, 2]) {
    const batchTrips = { n: 0 };
    const seqTrips = { n: 0 };
    const batched = await depsWith(latencyMs, batchTrips);
    const sequential = await depsWith(latencyMs, seqTrips);
    const iterations = latencyMs ? 50 : 500;
    const a = await measure("ingest (one batch)", iterations, (i) =>
      ingestEvent(batched, { agentId: "default", source: "webhook", priority: 1, dedupKey: `b:${i}`, payload: { i } }),
    );
    const b = await measure("ingest (separate statements)", iterations, (i) => ingestSequential(sequential, i));
    const calls = (t: { n: number }) => `${(t.n / (iterations * 5 + Math.min(iterations, 20))).toFixed(1)} round trips`;
    const where = latencyMs ? `ingest one event, ${latencyMs} ms per round trip (remote DB)` : "ingest one event, embedded libSQL";
    rows.push(
      { benchmark: where, variant: "one batch (fleetwarden)", result: `${fmtMs(a.medianMs)} · ${calls(batchTrips)}`, ratio: "1.00×" },
      {
        benchmark: where,
        variant: "same work, separate statements",
        result: `${fmtMs(b.medianMs)} · ${calls(seqTrips)}`,
        ratio: `${(b.medianMs / a.medianMs).toFixed(2)}×`,
      },
    );
  }

  const burst = await createTestDeps();
  const n = 1000;
  const start = performance.now();
  for (let i = 0; i < n; i++)
    await ingestEvent(burst, { agentId: "default", source: "webhook", priority: 1, dedupKey: `burst:${i}`, payload: { i } });
  const ingestMs = performance.now() - start;
  burst.clock.advance(burst.config.debounceStateMs);
  await deliverDue(burst, burst.scheduler as RecordingScheduler);
  const runs = (await listRuns(burst, "default", 10)).length;

  return [
    ...rows,
    {
      benchmark: `burst of ${n} state webhooks`,
      variant: "debounced (fleetwarden)",
      result: `${runs} run · ingest ${fmtMs(ingestMs / n)}/event`,
      ratio: `${n / runs}× fewer runs than one per event`,
    },
  ];
}
