/**
 * `npm run bench`: the HTTP benchmark (the real Node host against a bare baseline, see
 * http.bench.ts; ingest while the host runs agents and ticks, see busy.bench.ts), the
 * in-process micro-benchmarks, CPU per Worker invocation (cpu.bench.ts), issue 26's figures (speed.bench.ts), QStash messages per
 * simulated day (qstash-messages.bench.ts), GET /metrics at 1,000 instances (metrics.bench.ts), LLM call transcripts' bytes (transcripts.bench.ts), tokens per incident over a long session (incidents.bench.ts), one incident's tokens and prompt-cache share on a freshly listed 100-instance fleet (agent-cost.bench.ts), Turso rows read and written per instance per month (turso-rows.bench.ts),
 * printed as tables on stdout.
 * `npm run bench -- --write` also writes them to bench/RESULTS.md. Ratios compare variants
 * measured side by side in the same run; absolute figures depend on the machine and its load,
 * which is recorded next to them.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { table, type Row } from "./harness.ts";
import { busyBench } from "./busy.bench.ts";
import { httpBench } from "./http.bench.ts";
import { pipelineBench } from "./pipeline.bench.ts";
import { memoryBench } from "./memory.bench.ts";
import { promptBench } from "./prompt.bench.ts";
import { cpuBench } from "./cpu.bench.ts";
import { qstashMessagesBench, writeSection as writeQStashSection } from "./qstash-messages.bench.ts";
import { transcriptsBench, TRANSCRIPTS_HEADING } from "./transcripts.bench.ts";
import { incidentsBench, INCIDENTS_HEADING } from "./incidents.bench.ts";
import { agentCostBench, AGENT_COST_HEADING } from "./agent-cost.bench.ts";
import { writeSection } from "./results-file.ts";
import { speedBench, SPEED_HEADING } from "./speed.bench.ts";
import { metricsBench, METRICS_HEADING } from "./metrics.bench.ts";
import { tursoRowsBench, TURSO_ROWS_HEADING } from "./turso-rows.bench.ts";

const started = performance.now();
const machine = `Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, load average at start ${loadavg()
  .map((l) => l.toFixed(2))
  .join(" / ")}`;
const http = await httpBench();
http.rows.push(...(await busyBench()));
const micro: Row[] = [...(await pipelineBench()), ...(await promptBench()), ...(await memoryBench())];
const cpu = await cpuBench();
const qstash = await qstashMessagesBench();
const transcripts = await transcriptsBench();
const speed = await speedBench();
const incidents = await incidentsBench();
const agentCost = await agentCostBench();
const metrics = await metricsBench();
const tursoRows = await tursoRowsBench();
const minutes = ((performance.now() - started) / 60_000).toFixed(1);

const body = `## Over HTTP: fleetwarden's Node host against a bare baseline

${table(http.rows)}

### History growth (one Node host, webhooks for 200 instances)

${http.growthTable}

## In process (micro-benchmarks, \`:memory:\` database)

${table(micro)}
`;
console.log(
  `${machine}; ${minutes} min\n\n${body}\n${cpu}\n${qstash.section}\n\n${transcripts}\n\n${speed}\n\n${incidents}\n\n${agentCost}\n\n${metrics.section}\n\n${tursoRows}`,
);

const notes = `
How it is measured:

- **Processes.** fleetwarden runs as \`npm start\` runs it (\`functions/node.ts\`, a fresh \`file:\`
  database, the local scheduler, the cron interval); the baseline (\`bench/baseline-server.ts\`) is
  plain Hono on @hono/node-server, \`standardwebhooks\` verification (bearer check for chat) and one
  INSERT into a libSQL file table, with the same WAL / \`synchronous = FULL\` settings (the default;
  bench/speed.bench.ts compares FULL and NORMAL, each against the baseline at the same setting). Both are
  child processes; the load comes from this process over loopback keep-alive connections with
  requests signed before the clock starts. Both first get 3,000 webhooks and 3,000 chat messages
  untimed (warm-up), then five repetitions of 2 s alternate fleetwarden and baseline.
- **Webhooks** report 200 instances cycling through running / loading / exited, so most change the
  instance and request a (debounced) run; **chat** posts one message per request.
- **While runs and ticks happen** (\`bench/busy.bench.ts\`): only one server process exists during a
  sample: each repetition starts a fresh fleetwarden host, warms it and loads it while it works,
  stops it, then the baseline gets the same warm-up and load with nothing else running (order
  alternates). *Runs*: 200 simulated instances failing at 120 per hour each, 250 ms debounce
  windows, agent runs against a scripted OpenAI-compatible server over loopback (read the fleet,
  pin a fact, answer; prompts near the 30,000-token budget), \`POST /api/cron\` a second after the
  previous tick. *Ticks*: 100 agents sharing 1,000 simulated instances by label-prefix filters,
  full ticks back to back (never overlapping), no runs. Five repetitions, each at the same
  durability on both sides: FULL (the default) for both setups, NORMAL for the runs again. The
  ratio column lists each repetition's p99 against the baseline's in the same repetition; the CPU
  figures are cores used during the sample by the host's event loop, its other threads (V8's GC
  helpers, the token-counting worker, libuv) and this process (the load driver and the scripted
  LLM), since on 2 cores they share the machine. The host's CPU profile, event-loop delay and every
  stall over 50 ms can be recorded with \`BUSY_CPU_PROF=<dir>\` and read with
  \`node bench/stalls.mjs <dir>\`.
- **History growth**: one host is filled to 50,000 webhooks; at each point the cost per event is
  1 / throughput at 32 connections, and GET instances the median of 20 sequential requests.
  Database size is measured after a WAL checkpoint. The load column is the 1-minute load average.
- The micro-benchmarks below run in process on \`:memory:\`; they compare shapes of the same work.

Where the time went (CPU profiles of the Node host, \`node --cpu-prof\`, 32 connections, self time
of the main thread during the load; 2026-12-01, issue 12):

- **Webhooks, before**: libSQL \`prepare\` 17% (SQLite parsing and planning every statement again),
  drizzle building SQL 25% (\`is\`, \`buildQueryFromSourceParams\`, \`sql\`… for the five
  statements of a state change, which were not prepared), libSQL run/iterate/columns/raw 14%, GC 6%,
  @hono/node-server materialising a full Fetch Request per request for hono's body limit
  (\`makeTransferable\`, \`createAbortSignal\`, webstreams) about 8%.
- **Chat, before**: a Web Crypto SHA-256 job per bearer token check 11%, libSQL 30%, drizzle 9%
  (the lockout read and the activity insert, each its own round trip and the latter its own
  write transaction next to the group-committed ingest).
- **After**: no drizzle SQL building on the hot paths (its share is binding placeholders and
  mapping rows, 3–5%), no \`prepare\` in the top entries (kept per connection), no Fetch Request,
  no digest for the admin token; what is left is libSQL executing the statements (webhooks: run 13%,
  iterate 5%, columns/raw 8%, of which the column names are now read once per cached statement),
  HTTP parsing and writing, and the signature check.
- **Second pass** (statements timed inside the host, per webhook): the event insert's \`RETURNING\`
  (SQLite stages returned rows in a table of their own) 36 → 19 µs without it, \`changes()\` telling
  whether it stored the event; the history row 25 → 14 µs found by \`last_insert_rowid()\` instead
  of the dedup key and a \`NOT EXISTS\` probe; the driver building a native error for every
  \`raw()\` check of a statement that returns no rows (5% of CPU, now asked once per cached
  statement); a WAL checkpoint inside every few dozen commits holding the event loop for two fsyncs
  (in process, 47 µs of commit per webhook with them, 18 without; now on a worker thread). Chat:
  the lockout read was its largest statement (23 µs, a read transaction of its own); lockouts are
  now read once a second per process. Last, the profile showed the host idle a fifth of the time
  under 32 connections: every request in flight waited in the group for the 2 ms window to end.
  Group commit now commits after a turn of the event loop that adds nobody to the group; that
  moved webhooks at 32 connections from about 0.8× to 0.9–1× and chat past the baseline.
- **Variance.** On this shared 2-core VM the quiet ratios moved by up to 0.25 between runs of the same
  code (webhooks at 32 connections: 0.63–0.88 before the last change), the busy rows more.
- **The ticks stall** (the ticks row's p99 once 21.8× and once 61×, p99 1.37–3.3 s; issue 26).
  A profile of the busy host, with each event-loop stall matched to the samples taken during it,
  found two kinds. Start-up (module loading, migrations, lease recovery over 101 agents) happens
  before any load. The other was one statement: the telemetry update of a tick's reconciliation
  joined the agent's instances with the bound JSON array of samples, and SQLite looped over the
  instances and scanned the whole array for each. That is n² (1,000 × 1,000 for the agent without
  a filter: 380 ms holding the event loop, and a second 450 ms batch of the same update). With the
  array materialised first, each instance is one key lookup (2 ms). The query-plan test now
  refuses a JSON array scanned inside another loop. After the fix the longest stall in the
  measured window was 70 ms (GC, or the host descheduled while the load driver ran).
- **CPU while runs happen.** At NORMAL the busy host answers about half the baseline's requests
  a second, and its p99 was within 2× in 3 of 5 repetitions (1.81× median). The event loop is what
  runs out: about 0.88 of its one core, as much as the baseline's loop uses for twice the
  requests, because the runs (prompt reads, transcripts, tool rounds) and ticks share it with
  ingest. Its other threads take about 0.4 of a core (mostly V8's concurrent GC, then the token
  worker), the load driver with the scripted LLM about 0.25, so the machine has room left. With the
  runs turned off by hand (two repetitions, the same ticks) the ratio was 1.2× p99 and 0.7× req/s.
  Runs decided by the rules policy (no LLM) cost more than LLM runs here, because each acts on
  many exited instances (bounded by the per-run action limit). At FULL, the default, the fsync
  per commit sets the pace for both sides, and the ratios sit near 1× (5 of 5 within 2× for both
  setups).
- **Memory.** In one process with \`--expose-gc\`, the JS heap after GC stays at 38.7 MB from 10,000 to
  50,000 webhooks (the caches that could grow are bounded: agent rows by agents, prepared
  statements at 256 per connection, the group commit's queue empties every commit, the local
  scheduler holds only deliveries in flight); RSS moves between 210 and 231 MB. Before this work
  the heap after GC was as flat (40–43 MB) but V8 grew its heap to 141–161 MB under drizzle's
  per-request garbage, and RSS swung between 213 and 319 MB: the growth the first HTTP run
  reported was heap sizing, not retained objects. RSS measured from
  outside without forced GC also counts heap V8 has not yet returned and SQLite's page cache
  (\`cache_size\` 16 MiB), which fills as the history grows.
- **Database bytes.** The baseline stores one row (id, webhook-id, body) with one unique index;
  fleetwarden stores the inbox event (its payload repeats the report: instance, state, time,
  message), the instance's history row, and five indexes the hot paths and the dashboard read
  through (dedup, pending set, run, instance history, event → history). None is redundant for a
  query; the cheapest trims (dropping the payload's null message, a partial index on the pending
  set) would save under a tenth and need a schema change, so they are left; retention prunes
  dropped events after 7 days.
`;
if (process.argv.includes("--write")) {
  const path = new URL("./RESULTS.md", import.meta.url);
  // Sections other benchmarks write (bench/scale.bench.ts's "## Scale") are kept as they are;
  // the CPU section follows the notes on the HTTP figures.
  const current = existsSync(path) ? readFileSync(path, "utf8") : "";
  const kept = current.indexOf("\n## Scale");
  writeFileSync(
    path,
    `# Benchmark results\n\nWritten by \`npm run bench -- --write\` (${new Date().toISOString().slice(0, 10)}, ${machine}; the run took ${minutes} min).\n\n${body}${notes}\n${cpu.trimEnd()}\n${kept >= 0 ? current.slice(kept) : ""}`,
  );
  writeQStashSection(qstash.section);
  writeSection(TRANSCRIPTS_HEADING, transcripts);
  writeSection(SPEED_HEADING, speed);
  writeSection(INCIDENTS_HEADING, incidents, "## Scale");
  writeSection(AGENT_COST_HEADING, agentCost, "## Scale");
  writeSection(METRICS_HEADING, metrics.section, "## Scale");
  writeSection(TURSO_ROWS_HEADING, tursoRows, "## Scale");
  console.log("wrote bench/RESULTS.md");
}
