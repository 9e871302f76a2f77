/**
 * The first hour's dashboard papercuts (issue #38 item 4), each on the rendered pages of a real
 * app over real libSQL: a destroyed (gone) instance is not priced in the fleet table; "over
 * budget" is said once for the agent, not on every instance; a chart with too little to draw says
 * "Not enough data yet" instead of an empty or solid box; the instance page's facts line up (every
 * facts list is term/value pairs on one shared term column).
 */
import { describe, expect, it } from "vitest";
import { recordInstanceState } from "../../fleet/instances/instance-state.ts";
import { instanceSpend } from "../../schema/index.ts";
import { utcDay } from "../../fleet/economics/spend.ts";
import { reconcileFleet } from "../support/one-check.ts";
import { createTestDeps, type TestDeps } from "../support/test-deps.ts";
import { dashboardClient } from "./dashboard-client.ts";
import type { SimulatorProvider } from "../../fleet/providers/simulator.ts";
import { ColumnChart, StackedBar } from "../../dashboard/overview/charts.tsx";
import { DASHBOARD_CSS } from "../../dashboard/shell/styles.ts";

const row = (html: string, id: string) => html.match(new RegExp(`<tr data-instance-id="${id}"[\\s\\S]*?</tr>`))![0];

describe("fleet table: a destroyed instance", () => {
  it("has no $/h; the live ones keep theirs", async () => {
    const deps = await createTestDeps({ vars: { SIMULATOR_FAILURE_RATE: "0" } });
    const sim = deps.provider as SimulatorProvider;
    await sim.seed(2);
    await reconcileFleet(deps, "default");
    await sim.destroy("sim-2");
    deps.clock.advance(deps.config.reconcileIntervalMs);
    expect((await reconcileFleet(deps, "default")).gone).toEqual(["sim-2"]);
    const { html } = await (await dashboardClient(deps)).page("/fleet");
    expect(row(html, "sim-2")).toContain(">gone<");
    expect(row(html, "sim-2")).not.toMatch(/\$\d+\.\d\d\/h/);
    expect(row(html, "sim-1")).toMatch(/<td>\$0\.\d\d\/h<\/td>/);
  });
});

let webhookId = 0;
const report = (deps: TestDeps, instanceId: string, pricePerHour: number) =>
  recordInstanceState(deps, {
    agentId: "default",
    instanceId,
    state: "running",
    source: "webhook",
    dedupKey: `first-hour-${++webhookId}`,
    details: { pricePerHour },
    telemetry: { gpuUtil: 90, source: "webhook" as const },
  });

const spend = (deps: TestDeps, instanceId: string, usd: number) =>
  deps.db.insert(instanceSpend).values({ agentId: "default", instanceId, day: utcDay(deps.clock.now()), usd });

describe("over budget", () => {
  it("is one attention item for the agent, naming what still spends, not a reason on each instance", async () => {
    const deps = await createTestDeps({ vars: { SPEND_LIMIT_PER_DAY_USD: "5" } });
    await report(deps, "gpu-1", 2);
    await report(deps, "gpu-2", 1);
    await spend(deps, "gpu-1", 3);
    const client = await dashboardClient(deps);
    expect((await client.page("/")).html).not.toContain("attention-over-budget");
    await spend(deps, "gpu-2", 2.5);
    const { html } = await client.page("/");
    expect(html.match(/over budget/gi)?.length).toBe(3); // the strip's badge and line, the spend panel
    expect(html).toMatch(
      /<li data-testid="attention-over-budget">.*Over budget: \$5\.50 spent today \(UTC\) of the \$5\.00 daily limit\. Still spending: gpu-1 \(\$3\.00 today\), gpu-2 \(\$2\.50 today\)\.<\/li>/,
    );
    expect(html).not.toMatch(/data-testid="attention-instance" data-instance-id="gpu-[12]"/);
    // One thing needs attention, not two.
    expect(html).toMatch(/data-testid="attention" data-count="1"/);
  });
});

const figure = (html: string, id: string) =>
  html.match(new RegExp(`<figure class="chart" data-chart="${id}">[\\s\\S]*?</figure>`))?.[0] ?? "";
const render = async (node: unknown) => String(await (node as { toString(): Promise<string> | string }).toString());

describe("charts with little data", () => {
  it("a fresh overview says 'Not enough data yet' instead of drawing empty charts", async () => {
    const deps = await createTestDeps();
    const { html } = await (await dashboardClient(deps)).page("/");
    for (const id of ["runs-chart", "tokens-chart", "activity-chart", "fleet-states"]) {
      const chart = figure(html, id);
      expect(chart, id).toContain(`data-testid="${id}-empty"`);
      expect(chart, id).toContain("Not enough data yet");
      expect(chart, id).not.toContain("<svg");
      expect(chart, id).toMatch(new RegExp(`data-testid="${id}-summary"`)); // the sentence stays
    }
  });

  it("one or two columns are not drawn as solid blocks; three or more are, each column slim", async () => {
    const series = [{ key: "tokens", label: "Prompt tokens", tone: "fill-info" }];
    const buckets = (n: number) => Array.from({ length: n }, (_, i) => ({ label: `#${i + 1}`, values: { tokens: 1000 } }));
    const chart = (n: number) =>
      render(ColumnChart({ id: "c", title: "Prompt size", summary: "s", buckets: buckets(n), series, firstColumn: "Run" }));
    for (const n of [1, 2]) {
      expect(await chart(n)).toContain("Not enough data yet");
      expect(await chart(n)).not.toContain("<rect");
    }
    const three = await chart(3);
    expect(three).not.toContain("Not enough data yet");
    const widths = [...three.matchAll(/<rect [^>]*width="([\d.]+)"/g)].map((m) => Number(m[1]));
    expect(widths).toHaveLength(3);
    // The plot is 592 wide: a column never takes more than 0.7 of a twelfth of it.
    for (const w of widths) expect(w).toBeLessThanOrEqual((592 / 12) * 0.7 + 0.001);
    const bar = await render(StackedBar({ id: "b", title: "Instances", summary: "No instances yet.", segments: [] }));
    expect(bar).toContain("Not enough data yet");
    expect(bar).not.toContain("<svg");
  });
});

describe("the instance page's facts", () => {
  it("are term/value pairs in lists that share one fixed term column, so consecutive lists line up", async () => {
    const deps = await createTestDeps({ vars: { SIMULATOR_FAILURE_RATE: "0" } });
    await (deps.provider as SimulatorProvider).seed(1);
    await reconcileFleet(deps, "default");
    const { html } = await (await dashboardClient(deps)).page("/fleet/sim-1");
    const lists = [...html.matchAll(/<dl class="facts"[^>]*>([\s\S]*?)<\/dl>/g)].map((m) => m[1]!);
    expect(lists.length).toBeGreaterThanOrEqual(2); // the facts, then the economics
    for (const list of lists) {
      const tags = [...list.matchAll(/<(dt|dd)>/g)].map((m) => m[1]);
      // Only dt and dd, alternating: nothing else sits in the grid to push a value into the term column.
      expect(list.replace(/<(dt|dd)>[\s\S]*?<\/\1>/g, "").trim()).toBe("");
      expect(tags.join(" ")).toBe(
        Array(tags.length / 2)
          .fill("dt dd")
          .join(" "),
      );
    }
    // One fixed term width for every list (max-content sized each list on its own: misaligned).
    const rule = DASHBOARD_CSS.match(/dl\.facts \{[^}]*\}/)![0];
    expect(rule).toMatch(/grid-template-columns:\s*[\d.]+rem minmax\(0,\s*1fr\)/);
    expect(rule).not.toContain("max-content");
  });
});
