/** The eval's report: one row per situation and the total, as a terminal table and as eval/RESULTS.md. */
import type { EvalReport } from "./evaluate.ts";
import type { SituationResult } from "./score.ts";

const COLUMNS = ["situation", "result", "wrong", "missed", "time to act", "LLM calls", "tokens"] as const;

function cells(r: SituationResult): string[] {
  return [
    r.name,
    r.pass ? "pass" : "FAIL",
    r.wrong.join("; ") || "-",
    r.missed.join("; ") || "-",
    r.timeToActS === null ? "-" : `${r.timeToActS} s`,
    String(r.llmCalls),
    String(r.tokens),
  ];
}

const total = (report: EvalReport) =>
  `score ${report.passed}/${report.total} situations passed (${report.score} %), decider: ${report.decider}`;

export function formatTable(report: EvalReport): string {
  const rows = [[...COLUMNS], ...report.results.map(cells)];
  const widths = COLUMNS.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i]!)).join("  ");
  return [line(rows[0]!), widths.map((w) => "-".repeat(w)).join("  "), ...rows.slice(1).map(line), "", total(report)].join("\n");
}

export function resultsMarkdown(report: EvalReport): string {
  const row = (r: string[]) => `| ${r.map((c) => c.replace(/\|/g, "\\|")).join(" | ")} |`;
  return [
    "# Eval results",
    "",
    "Written by `npm run eval -- --write` (eval/run.ts): each scripted situation of eval/situations.ts run on the",
    "simulator with a fake clock through the real pipeline. Wrong: forbidden decisions made; missed: expected ones",
    "not made; time to act in simulated seconds from the situation's first step.",
    "",
    `**${total(report)}**`,
    "",
    row([...COLUMNS]),
    row(COLUMNS.map(() => "---")),
    ...report.results.map((r) => row(cells(r))),
    "",
  ].join("\n");
}
