/**
 * `npm run eval [-- --write]`: runs the eval against the rules policy, or, with OPENAI_BASE_URL /
 * OPENAI_API_KEY / AGENT_MODEL set, against that OpenAI-compatible endpoint; prints each
 * situation as it finishes (a FAIL with what was expected, what happened, and whether it needs an
 * LLM: eval/verdict.ts), the table with the total score, and the verdict; `--write` writes
 * eval/RESULTS.md. Exits 0 when the rules policy scores as expected, 1 otherwise (verdict.ts).
 */
import { writeFileSync } from "node:fs";
import { runEval } from "./evaluate.ts";
import { formatTable, resultsMarkdown } from "./report.ts";
import { resultLines, verdict } from "./verdict.ts";

const llmVars = Object.fromEntries(
  (["OPENAI_BASE_URL", "OPENAI_API_KEY", "AGENT_MODEL"] as const).flatMap((name) =>
    process.env[name] ? [[name, process.env[name]!]] : [],
  ),
);
const decider = llmVars.OPENAI_API_KEY || llmVars.OPENAI_BASE_URL ? (llmVars.AGENT_MODEL ?? "the configured model") : "rules policy";
const report = await runEval({
  llmVars,
  onResult: (r) => console.error(resultLines(r, decider === "rules policy" ? decider : "model").join("\n")),
});
console.log(formatTable(report));
if (process.argv.includes("--write")) {
  const file = new URL("./RESULTS.md", import.meta.url);
  writeFileSync(file, resultsMarkdown(report));
  console.log(`\nwrote ${file.pathname}`);
}
const { code, line } = verdict(report);
console.log(`\n${line}`);
process.exitCode = code;
