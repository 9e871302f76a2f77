/**
 * The overview's three charts, rendered together (one live region; read by
 * jobs/read-models/charts.ts): runs of the last
 * 24 hours by outcome, the largest prompt per run against the context budget with compaction
 * marked, and actions and notifications per hour. Each summary sentence is written from the data.
 */
import { ACTIVITY, PROMPT_SERIES, RUN_OUTCOMES, TOKEN_RUNS, type ChartsData } from "../../jobs/read-models/charts.ts";
import { ColumnChart } from "./charts.tsx";

const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;

export function runsSummary(totals: Record<string, number>): string {
  const all = Object.values(totals).reduce((a, n) => a + n, 0);
  if (all === 0) return "No finished runs in the last 24 hours.";
  const parts = RUN_OUTCOMES.filter((s) => (totals[s.key] ?? 0) > 0).map((s) => `${totals[s.key]} ${s.label}`);
  return `${plural(all, "run")} in the last 24 hours: ${parts.join(", ")}.`;
}

export function OverviewCharts({ data }: { data: ChartsData }) {
  const { runs, prompts, activity } = data;
  const over = prompts.buckets.filter((b) => (b.values.tokens ?? 0) > prompts.budget).length;
  const promptSummary = prompts.buckets.length
    ? `Last ${plural(prompts.buckets.length, "run")}: largest prompt ${prompts.largest.toLocaleString("en-US")} of a ${prompts.budget.toLocaleString("en-US")}-token budget; ${over === 0 ? "none over budget" : `${over} over budget`}; compaction ran in ${plural(prompts.marks.length, "run")}.`
    : "No runs yet.";
  return (
    <div class="charts">
      <ColumnChart
        id="runs-chart"
        title="Runs per hour, last 24 h"
        summary={runsSummary(runs.totals)}
        buckets={runs.buckets}
        series={RUN_OUTCOMES}
        firstColumn="Hour (UTC)"
      />
      <ColumnChart
        id="tokens-chart"
        title={`Prompt size per run (last ${TOKEN_RUNS})`}
        summary={promptSummary}
        buckets={prompts.buckets}
        series={PROMPT_SERIES}
        firstColumn="Run"
        line={{ value: prompts.budget, label: `the context budget, ${prompts.budget.toLocaleString("en-US")} tokens` }}
        marks={prompts.marks}
      />
      <ColumnChart
        id="activity-chart"
        title="Actions and notifications per hour, last 24 h"
        summary={`${plural(activity.actions, "action")} and ${plural(activity.notifications, "notification")} in the last 24 hours.`}
        buckets={activity.buckets}
        series={ACTIVITY}
        firstColumn="Hour (UTC)"
      />
    </div>
  );
}
