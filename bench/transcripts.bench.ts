/**
 * What keeping every LLM call costs in database bytes (issue #22: "counted against the
 * database-size figures"): typical incidents (exit → read the logs, restart, schedule a re-check,
 * reply: four LLM calls) run through the real run step against the scripted OpenAI-compatible
 * server over loopback, at 10 and 100 instances (the request carries the fleet snapshot, so its
 * size grows with the fleet). Reports llm_calls' bytes (table and indexes, SQLite's dbstat) per
 * call and per incident next to the bytes the rest of the database grew by over the same
 * incidents (runs, messages, events, actions…), and what LLM_TRANSCRIPT_DAYS (14) of transcripts
 * is at 10 and 100 incidents a day.
 * Alone: `npx tsx bench/transcripts.bench.ts [--write]`.
 */
import { sql } from "drizzle-orm";
import { agentFixture, say, setInstanceState } from "../test/support/agent-fixture.ts";
import { ScriptedLlm } from "../test/support/scripted-llm.ts";
import type { TestDeps } from "../test/support/test-deps.ts";
import { writeSection } from "./results-file.ts";

const INCIDENTS = 20;
export const TRANSCRIPTS_HEADING = "## LLM call transcripts";

async function objectBytes(deps: TestDeps): Promise<{ transcripts: number; rest: number }> {
  const rows = await deps.db.all<{ name: string; bytes: number }>(sql`select name, sum(pgsize) as bytes from dbstat group by name`);
  const transcripts = rows
    .filter((r) => r.name === "llm_calls" || r.name.startsWith("llm_calls_"))
    .reduce((s, r) => s + Number(r.bytes), 0);
  const total = rows.reduce((s, r) => s + Number(r.bytes), 0);
  return { transcripts, rest: total - transcripts };
}

async function measureFleet(instances: number) {
  const llm = await new ScriptedLlm().start();
  const { deps } = await agentFixture({ llm, instances });
  const before = await objectBytes(deps);
  let calls = 0;
  for (let i = 0; i < INCIDENTS; i++) {
    const id = `sim-${(i % instances) + 1}`;
    await setInstanceState(deps, id, "exited");
    llm.push(
      { tools: [{ name: "get_instance_logs", arguments: { instance_id: id } }] },
      {
        tools: [{ name: "start_instance", arguments: { instance_id: id, reason: "exited with code 1; the log shows a transient error" } }],
      },
      {
        tools: [
          {
            name: "schedule_next_check",
            arguments: { in_seconds: 300, reason: `check that ${id} came back`, instance_id: id, expect_state: "running" },
          },
        ],
      },
      { text: `${id} exited with code 1; I restarted it and will check again in 5 minutes.` },
    );
    await say(deps, `${id} exited, please take a look`);
    calls += 4;
    deps.clock.advance(10 * 60_000);
  }
  const after = await objectBytes(deps);
  await llm.close();
  const transcripts = after.transcripts - before.transcripts;
  const rest = after.rest - before.rest;
  return { instances, calls, perCall: transcripts / calls, perIncident: transcripts / INCIDENTS, restPerIncident: rest / INCIDENTS };
}

export async function transcriptsBench(): Promise<string> {
  const rows = [await measureFleet(10), await measureFleet(100)];
  const kb = (b: number) => `${(b / 1024).toFixed(1)} KB`;
  const mb = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MB`;
  const lines = [
    TRANSCRIPTS_HEADING,
    "",
    `${INCIDENTS} typical incidents per fleet (exit → logs, restart, re-check, reply: 4 LLM calls each) through the real run step and the scripted LLM over loopback; bytes from SQLite's dbstat, \`:memory:\` database (page layout as on a file). "rest" is what every other table and index grew by over the same incidents.`,
    "",
    "| instances | bytes per LLM call | transcripts per incident | rest of the database per incident | 14 days at 10 incidents/day | 14 days at 100 incidents/day |",
    "|---|---|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${r.instances} | ${kb(r.perCall)} | ${kb(r.perIncident)} | ${kb(r.restPerIncident)} | ${mb(r.perIncident * 10 * 14)} | ${mb(r.perIncident * 100 * 14)} |`,
    ),
    "",
    "Each call keeps its whole request (system prompt, snapshot, history, tools), so transcripts dominate the bytes an incident adds; LLM_TRANSCRIPT_DAYS bounds them (the retention pass deletes at most 1,000 a tick).",
  ];
  return lines.join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const table = await transcriptsBench();
  console.log(table);
  if (process.argv.includes("--write")) {
    writeSection(TRANSCRIPTS_HEADING, table);
    console.log("wrote bench/RESULTS.md");
  }
  process.exit(0);
}
