/**
 * Tokens per incident over a long session (a long session's incident should cost about what a
 * fresh one does): 40 identical scripted incidents at 10 and 100 instances through the real
 * pipeline (test/support/incident-session.ts), the first incident of the session against the
 * last ten. Token counts do not depend on the machine's load, so this section is exact anywhere.
 * `npx tsx bench/incidents.bench.ts --write` writes only its own section of bench/RESULTS.md.
 */
import { INCIDENTS, incidentSession } from "../test/support/incident-session.ts";
import { writeSection } from "./results-file.ts";

export const INCIDENTS_HEADING = "## Tokens per incident";

const k = (n: number) => `${(n / 1000).toFixed(1)}k`;

export async function incidentsBench(): Promise<string> {
  const rows: string[] = [];
  for (const instances of [10, 100]) {
    const s = await incidentSession(instances);
    const first = s.perIncident[0]!;
    const last = s.perIncident.at(-1)!;
    const lastTen = s.perIncident.slice(-10);
    const peak = Math.max(...lastTen);
    rows.push(
      `| ${instances} | ${k(first)} | ${k(last)} (${(last / first).toFixed(2)}×) | ${k(peak)} (${(peak / first).toFixed(2)}×) | ${k(s.maxCall)} | ${s.calls} |`,
    );
  }
  return [
    INCIDENTS_HEADING,
    "",
    `${INCIDENTS} identical incidents in one session (an instance runs out of memory → read its log, start it, schedule a re-check, answer; the re-check confirms: 5 agent calls), 10 simulated minutes apart, through the real pipeline and run step against a scripted OpenAI-compatible server over loopback, 30,000-token budget. Each incident's figure is the prompt tokens of all its LLM calls as the budget counts them, the summariser's included (the scripted summary is about 120 tokens).`,
    "",
    "| instances | first incident | incident 40 | largest of incidents 31–40 | largest call | LLM calls |",
    "|---|---|---|---|---|---|",
    ...rows,
    "",
    "Flat because history is sent as stored only up to its verbatim share (3.5 % of the budget; past it earlier runs' tool outputs and snapshots are stubbed all at once, so a provider's prompt cache still serves the requests that follow) and is then held to its own 2 % share of the budget (past it the oldest turns are folded into the persisted summary, itself capped at 2 %), and on a fleet over 20 instances the snapshot lists the quiet ones as one summary line. Before this, incident 40 cost 147.6k tokens at 10 instances (10.3× the first) and 148.3k at 100, with every call near the 30,000 budget.",
  ].join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const section = await incidentsBench();
  console.log(section);
  if (process.argv.includes("--write")) {
    writeSection(INCIDENTS_HEADING, section, "## Scale");
    console.log("wrote bench/RESULTS.md");
  }
  process.exit(0);
}
