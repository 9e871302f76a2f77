/**
 * `npm run bench`: the HTTP benchmark (the real Node host against a bare baseline, see
 * http.bench.ts; ingest while the host runs agents and ticks, see busy.bench.ts) and the
 * in-process micro-benchmarks, printed as tables on stdout.
 * `npm run bench -- --write` also writes them to bench/RESULTS.md. Ratios compare variants
 * measured side by side in the same run; absolute figures depend on the machine and its load,
 * which is recorded next to them.
 */
import { writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { table, type Row } from "./harness.ts";
import { busyBench } from "./busy.bench.ts";
import { httpBench } from "./http.bench.ts";
import { pipelineBench } from "./pipeline.bench.ts";
import { memoryBench } from "./memory.bench.ts";
import { promptBench } from "./prompt.bench.ts";

const started = performance.now();
const machine = `Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, load average at start ${loadavg()
  .map((l) => l.toFixed(2))
  .join(" / ")}`;
const http = await httpBench();
http.rows.push(...(await busyBench()));
const micro: Row[] = [...(await pipelineBench()), ...(await promptBench()), ...(await memoryBench())];
const minutes = ((performance.now() - started) / 60_000).toFixed(1);

const body = `## Over HTTP: fleetwarden's Node host against a bare baseline

${table(http.rows)}

### History growth (one Node host, webhooks for 200 instances)

${http.growthTable}

## In process (micro-benchmarks, \`:memory:\` database)

${table(micro)}
`;
console.log(`${machine}; ${minutes} min\n\n${body}`);

const notes = `
How it is measured:

- **Processes.** fleetwarden runs as \`npm start\` runs it (\`functions/node.ts\`, a fresh \`file:\`
  database, the local scheduler, the cron interval); the baseline (\`bench/baseline-server.ts\`) is
  plain Hono on @hono/node-server, \`standardwebhooks\` verification (bearer check for chat) and one
  INSERT into a libSQL file table, with the same WAL / \`synchronous = NORMAL\` settings. Both are
  child processes; the load comes from this process over loopback keep-alive connections with
  requests signed before the clock starts. Repetitions alternate fleetwarden and baseline.
- **Webhooks** report 200 instances cycling through running / loading / exited, so most change the
  instance and request a (debounced) run; **chat** posts one message per request.
- **While runs and ticks happen** (\`bench/busy.bench.ts\`): only one server process exists during a
  sample: each repetition starts a fresh fleetwarden host, warms it and loads it while it works,
  stops it, then the baseline gets the same warm-up and load with nothing else running (order
  alternates). *Runs*: 200 simulated instances failing at 120 per hour each, 250 ms debounce
  windows, agent runs against a scripted OpenAI-compatible server over loopback (read the fleet,
  pin a fact, answer; prompts near the 30,000-token budget), \`POST /api/cron\` a second after the
  previous tick. *Ticks*: 100 agents sharing 1,000 simulated instances by label-prefix filters,
  full ticks back to back (never overlapping), no runs. The host's CPU profile and event-loop delay
  can be recorded with \`BUSY_CPU_PROF=<dir>\`.
- **History growth**: one host is filled to 50,000 webhooks; at each point the cost per event is
  1 / throughput at 32 connections, and GET instances the median of 20 sequential requests.
  Database size is measured after a WAL checkpoint. The load column is the 1-minute load average.
- The micro-benchmarks below run in process on \`:memory:\`; they compare shapes of the same work.
`;
if (process.argv.includes("--write")) {
  writeFileSync(
    new URL("./RESULTS.md", import.meta.url),
    `# Benchmark results\n\nWritten by \`npm run bench -- --write\` (${new Date().toISOString().slice(0, 10)}, ${machine}; the run took ${minutes} min).\n\n${body}${notes}`,
  );
  console.log("wrote bench/RESULTS.md");
}
