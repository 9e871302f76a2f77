/**
 * get_instance_logs: the agent reads the tail of a container's log through the provider (here
 * the simulator), validated, capped, and never counted as a mutation.
 */
import { describe, expect, it } from "vitest";
import { runToolCall } from "../../agent/tools/index.ts";
import { LOG_TAIL_MAX_CHARS } from "../../agent/tools/fleet-read.ts";
import type { SimulatorProvider } from "../../fleet/providers/simulator.ts";
import type { TestDeps } from "../support/test-deps.ts";
import { holdLease } from "../support/held-lease.ts";
import { agentFixture } from "./harness.ts";

let call = 0;
const run = async (deps: TestDeps, args: unknown) => {
  const outcome = await runToolCall(
    {
      deps,
      agentId: "default",
      runId: 3,
      toolCallId: `l${++call}`,
      fence: await holdLease(deps, "default", 3),
      answering: { events: [], wakes: [] },
    },
    "get_instance_logs",
    JSON.stringify(args),
  );
  return { ...outcome, parsed: JSON.parse(outcome.content) as { log?: string; truncated?: boolean; error?: string } };
};

describe("get_instance_logs", () => {
  it("shows why an exited container failed, only its last lines, and mutates nothing", async () => {
    const { deps } = await agentFixture();
    await (deps.provider as SimulatorProvider).injectFailure("sim-2", "oom");
    const full = await run(deps, { instance_id: "sim-2" });
    expect(full).toMatchObject({ invalid: false, mutated: false });
    expect(full.parsed.log).toMatch(/CUDA out of memory/);
    expect(full.parsed.log).toMatch(/container exited with code 137$/);
    const tail = await run(deps, { instance_id: "sim-2", tail_lines: 2 });
    expect(tail.parsed.log!.split("\n")).toHaveLength(2);
    expect(tail.parsed.log).toMatch(/^torch.OutOfMemoryError/);
  });

  it("refuses bad arguments and reports an unknown instance as an error", async () => {
    const { deps } = await agentFixture();
    for (const args of [
      {},
      { instance_id: "sim-1", tail_lines: 0 },
      { instance_id: "sim-1", tail_lines: 1001 },
      { instance_id: "sim-1", extra: true },
    ]) {
      expect(await run(deps, args)).toMatchObject({ invalid: true, mutated: false });
    }
    const missing = await run(deps, { instance_id: "sim-99" });
    expect(missing.parsed.error).toMatch(/could not get the logs of instance sim-99: no such instance/);
  });

  it("keeps a long log's tail within the cap and says it was cut", async () => {
    const { deps } = await agentFixture();
    const provider = deps.provider as SimulatorProvider;
    const long = await provider.logs("sim-1", { tailLines: 1000, maxChars: 120 });
    expect(long.truncated).toBe(true);
    expect(long.text.length).toBeLessThanOrEqual(120);
    expect(long.text).toMatch(/loss/);
    const shown = await run(deps, { instance_id: "sim-1", tail_lines: 1000 });
    expect(shown.parsed.log!.length).toBeLessThanOrEqual(LOG_TAIL_MAX_CHARS);
  });
});
