/**
 * `npm run eval [-- --write]`: runs the eval against the rules policy, or, with OPENAI_BASE_URL /
 * OPENAI_API_KEY / AGENT_MODEL set, against that OpenAI-compatible endpoint; prints a row per
 * situation as it finishes and the table with the total score; `--write` writes eval/RESULTS.md.
 */
import { writeFileSync } from "node:fs";
import { runEval } from "./evaluate.ts";
import { formatTable, resultsMarkdown } from "./report.ts";

const llmVars = Object.fromEntries(
  (["OPENAI_BASE_URL", "OPENAI_API_KEY", "AGENT_MODEL"] as const).flatMap((name) =>
    process.env[name] ? [[name, process.env[name]!]] : [],
  ),
);
const report = await runEval({ llmVars, onResult: (r) => console.error(`${r.pass ? "pass" : "FAIL"}  ${r.name}`) });
console.log(formatTable(report));
if (process.argv.includes("--write")) {
  const file = new URL("./RESULTS.md", import.meta.url);
  writeFileSync(file, resultsMarkdown(report));
  console.log(`\nwrote ${file.pathname}`);
}
