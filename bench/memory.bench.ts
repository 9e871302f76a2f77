/**
 * Memory: the pipeline keeps nothing per event in process memory (debounce, leases and the
 * schedule live in the database), so the JS heap after ingesting and running 10,000 events
 * should stay near where it started. Reported as heap growth per 1,000 events.
 */
import { ingestEvent } from "../pipeline/index.ts";
import { createTestDeps, type RecordingScheduler } from "../test/support/test-deps.ts";
import { deliverDue } from "../test/support/drive.ts";
import type { Row } from "./harness.ts";

const gc = (globalThis as { gc?: () => void }).gc;

function heapMb(): number {
  gc?.();
  return process.memoryUsage().heapUsed / 1024 / 1024;
}

export async function memoryBench(): Promise<Row[]> {
  const deps = await createTestDeps();
  const n = 10_000;
  const warm = async (from: number, to: number) => {
    for (let i = from; i < to; i++) {
      await ingestEvent(deps, {
        agentId: "default",
        source: "webhook",
        priority: 1,
        dedupKey: `m:${i}`,
        payload: { i, note: "x".repeat(200) },
      });
      if (i % 100 === 99) {
        deps.clock.advance(deps.config.debounceStateMs);
        await deliverDue(deps, deps.scheduler as RecordingScheduler);
      }
    }
  };
  await warm(0, 1000);
  const before = heapMb();
  await warm(1000, 1000 + n);
  const after = heapMb();
  const perThousand = ((after - before) / n) * 1000;
  return [
    {
      benchmark: `JS heap over ${n.toLocaleString("en")} events and ${n / 100} runs`,
      variant: gc ? "after GC" : "no --expose-gc: noisy",
      result: `${before.toFixed(1)} MB → ${after.toFixed(1)} MB`,
      ratio: `${perThousand.toFixed(3)} MB per 1,000 events`,
    },
  ];
}
