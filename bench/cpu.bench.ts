/**
 * CPU per Worker invocation (issue 20): a run delivery, a webhook, a chat message and the cron
 * tick, on the Worker's code path — `handleFetch` / `handleScheduled` of
 * functions/host/worker-host.ts with a Worker env — in isolates of their own (bench/cpu-isolate.ts
 * child processes) against Turso, QStash and the LLM played by this process (bench/cpu-world.ts),
 * warm (an isolate that has served the same cycle before) and cold (an isolate's first
 * invocation), with a bare baseline (bench/cpu-baseline.ts). Node stands in for workerd: same V8,
 * but Node's fetch is JavaScript where workerd's is native, so the figures lean high.
 *
 * `npm run bench` prints it (bench/run.ts); run alone: `tsx bench/cpu.bench.ts [--write]`.
 * `CPU_BENCH_PROF=<file>` sends every run delivery to an isolate of its own that records a CPU
 * profile of its invocations (only run deliveries) into <file> (.cpuprofile, for Chrome DevTools).
 * `CPU_BENCH_WARM` / `CPU_BENCH_COLD` set the sample counts.
 */
import { cpus, loadavg } from "node:os";
import { startIsolate, type Isolate } from "./cpu-isolates.ts";
import type { Invocation, Measured } from "./cpu-protocol.ts";
import { INSTANCES, startWorld, type World } from "./cpu-world.ts";
import { fmtMs } from "./harness.ts";
import { writeSection } from "./results-file.ts";

const WARM = Number(process.env.CPU_BENCH_WARM ?? 30);
const COLD = Number(process.env.CPU_BENCH_COLD ?? 5);
/** Cycles before and after the history is grown; none is measured. */
const WARM_UPS = 3;
/** The agent's stored history before measuring: a session in steady use (compaction keeps it 21,000–30,000). */
const HISTORY_TOKENS = 21_000;
const HEADING = "## CPU per Worker invocation (bench/cpu.bench.ts)";
/** Cloudflare Workers Free: CPU time per invocation. */
const FREE_PLAN_CPU_MS = 10;

const KINDS = {
  webhook: "webhook: a state change (ingest, run request, 1 QStash publish)",
  runIncident: "run delivery after the webhook: claim, prompt, 3 LLM calls (read logs, restart, answer), finish",
  chat: "chat message (lockout check, ingest with its activity row, 1 QStash publish)",
  runChat: "run delivery after the chat message: 2 LLM calls (list instances, reply)",
  scheduled: "the scheduled handler (`handleScheduled`, 1 agent)",
  tick: `one agent's tick delivery (${INSTANCES} simulated instances, reconciled)`,
  cron: "the tick inline (POST /api/cron, 1 agent)",
  baseline: "baseline: bare Hono + standardwebhooks + 1 INSERT over Hrana (@libsql/client/web)",
} as const;
type Kind = keyof typeof KINDS;

type Samples = Record<Kind, { warm: Measured[]; cold: Measured[] }>;

interface Bench {
  world: World;
  /** The warm isolate: every invocation of the cycle, over and over. */
  warm: Isolate;
  /** Where run deliveries go: the warm isolate, or the profiled one under CPU_BENCH_PROF. */
  runs: Isolate;
  baseline: Isolate;
  samples: Samples;
  promptTokens: number[];
  /** Tick deliveries the scheduled handler published (it fans out) rather than ticking inline. */
  scheduledPublishedTicks: number;
  /** Cycles given up part-way (what they measured before is kept), with why. */
  abandoned: string[];
}

/** Cycles that may be given up before the bench gives up itself. */
const MAX_ABANDONED = 5;

/**
 * Runs one cycle; one that fails part-way (on a machine loaded enough, a keep-alive connection
 * the test server just closed fails a subrequest, and the run with it) is given up, its leftovers
 * settled, and the bench goes on.
 */
async function attempt(b: Bench, what: string, step: () => Promise<void>): Promise<void> {
  try {
    await step();
  } catch (err) {
    b.abandoned.push(`${what}: ${err instanceof Error ? err.message : String(err)}`);
    console.error(`cpu bench: gave up ${b.abandoned.at(-1)}`);
    if (b.abandoned.length > MAX_ABANDONED)
      throw new Error(`cpu bench: more than ${MAX_ABANDONED} cycles failed; the last: ${b.abandoned.at(-1)}`);
    await b.world.discardScripted();
    await settle(b);
    await b.world.discardScripted();
  }
}

function expectStatus(kind: string, m: Measured, status: number): Measured {
  if (m.status !== status) throw new Error(`cpu bench: ${kind} answered ${m.status} (expected ${status}): ${m.body.slice(0, 300)}`);
  return m;
}

/** The run delivery the last ingest published, with the LLM's answers for it scripted first. */
function scriptedRun(b: Bench, kind: "runIncident" | "runChat", instance: string): NonNullable<Invocation["request"]> {
  const delivery = b.world.takePublished("run");
  if (!delivery) throw new Error(`cpu bench: no run delivery was published before ${kind}`);
  if (b.world.llm.pending) throw new Error(`cpu bench: ${b.world.llm.pending} scripted LLM answers were left over`);
  if (kind === "runIncident") {
    b.world.llm.push(
      { tools: [{ name: "get_instance_logs", arguments: { instance_id: instance } }] },
      {
        tools: [
          {
            name: "start_instance",
            arguments: { instance_id: instance, reason: "it exited; the log shows no error a restart would not fix" },
          },
        ],
      },
      { text: `${instance} went down; I read its log and restarted it.` },
    );
  } else
    b.world.llm.push(
      { tools: [{ name: "list_instances", arguments: {} }] },
      { text: `All ${INSTANCES} instances are known; nothing needs a human.` },
    );
  return delivery;
}

async function run(b: Bench, isolate: Isolate, delivery: NonNullable<Invocation["request"]>, kind: string): Promise<Measured> {
  const m = expectStatus(kind, await isolate.invoke(delivery), 200);
  if (!m.body.includes('"succeeded"')) throw new Error(`cpu bench: ${kind} did not succeed: ${m.body}`);
  if (b.world.llm.pending) throw new Error(`cpu bench: ${kind} left ${b.world.llm.pending} scripted LLM answers unused`);
  b.promptTokens.push(await b.world.lastContextTokens());
  return m;
}

/** Delivers, unmeasured, whatever the last step published (a tick's reconciliation may request a run). */
async function settle(b: Bench): Promise<void> {
  for (let delivery = b.world.takePublished(); delivery; delivery = b.world.takePublished()) {
    if (delivery.body?.includes('"type":"run"')) b.world.llm.push({ text: "Nothing needs doing." });
    const m = await b.warm.invoke(delivery);
    if (m.status !== 200) throw new Error(`cpu bench: settling a delivery answered ${m.status}: ${m.body}`);
    await b.world.discardScripted(); // a run that found nothing to do never asked
  }
}

/** Webhook state for the n-th cycle: each instance alternates, so every report is a change. */
const report = (n: number) => ({ instance: `sim-${(n % INSTANCES) + 1}`, state: Math.floor(n / INSTANCES) % 2 ? "offline" : "exited" });

/** One cycle of every invocation on the warm isolates; recorded into the warm samples when `record`. */
async function cycle(b: Bench, n: number, record: boolean): Promise<void> {
  const keep = (kind: Kind, m: Measured) => void (record && b.samples[kind].warm.push(m));
  const { instance, state } = report(n);
  await settle(b);
  keep("webhook", expectStatus("webhook", await b.warm.invoke(b.world.webhook(instance, state)), 202));
  keep("runIncident", await run(b, b.runs, scriptedRun(b, "runIncident", instance), "run delivery"));
  keep("chat", expectStatus("chat", await b.warm.invoke(b.world.chat()), 202));
  keep("runChat", await run(b, b.runs, scriptedRun(b, "runChat", instance), "run delivery"));
  const publishes = b.world.qstash.requests.length;
  keep("scheduled", await b.warm.invoke());
  // A batch request carries each message's body as a JSON string, its quotes escaped.
  if (b.world.qstash.requests.slice(publishes).some((r) => /\\?"type\\?":\\?"tick/.test(r.body))) b.scheduledPublishedTicks++;
  // A fan-out's tick (or, within the same minute, its deduplicated repeat) is delivered as this one.
  while (b.world.takePublished("tick"));
  keep("tick", expectStatus("tick delivery", await b.warm.invoke(b.world.tickDelivery()), 200));
  await settle(b);
  keep("cron", expectStatus("cron", await b.warm.invoke(b.world.cronInline()), 200));
  keep("baseline", expectStatus("baseline", await b.baseline.invoke(b.world.webhook(instance, state)), 202));
}

/**
 * The first invocation of a fresh isolate for each kind; what a kind needs first is done warm.
 * The round's isolates are started together beforehand (each takes seconds of tsx start-up), so
 * none is starting while another is measured.
 */
async function coldRound(b: Bench, n: number): Promise<void> {
  const kinds = Object.keys(KINDS) as Kind[];
  const isolates = new Map(
    await Promise.all(kinds.map(async (k) => [k, await startIsolate(k === "baseline" ? "baseline" : "worker", b.world.env)] as const)),
  );
  const fresh = async (kind: Kind, request?: Invocation["request"]) => {
    const isolate = isolates.get(kind)!;
    const m = await isolate.invoke(request);
    b.samples[kind].cold.push(m);
    await isolate.close();
    return m;
  };
  try {
    const { instance, state } = report(n);
    await settle(b);
    expectStatus("cold webhook", await fresh("webhook", b.world.webhook(instance, state)), 202);
    await settle(b);
    expectStatus("webhook", await b.warm.invoke(b.world.webhook(instance, state === "exited" ? "offline" : "exited")), 202);
    expectStatus("cold run delivery", await fresh("runIncident", scriptedRun(b, "runIncident", instance)), 200);
    expectStatus("cold chat", await fresh("chat", b.world.chat()), 202);
    await settle(b);
    expectStatus("chat", await b.warm.invoke(b.world.chat()), 202);
    expectStatus("cold run delivery", await fresh("runChat", scriptedRun(b, "runChat", instance)), 200);
    await fresh("scheduled");
    await settle(b);
    expectStatus("cold tick delivery", await fresh("tick", b.world.tickDelivery()), 200);
    await settle(b);
    expectStatus("cold cron", await fresh("cron", b.world.cronInline()), 200);
    await settle(b);
    expectStatus("cold baseline", await fresh("baseline", b.world.webhook(instance, state)), 202);
  } finally {
    await Promise.all([...isolates.values()].map((i) => i.close()));
  }
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
};
const median = (values: number[]) => percentile(values, 50);
const sum = (values: number[]) => values.reduce((a, v) => a + v, 0);

function fits(warm: number[], cold: number[]): string {
  const warmOk = percentile(warm, 95) <= FREE_PLAN_CPU_MS;
  const coldOk = cold.every((ms) => ms <= FREE_PLAN_CPU_MS);
  if (cold.length === 0) return warmOk ? "yes (warm)" : "no";
  if (warmOk && coldOk) return "yes";
  if (!warmOk && !coldOk) return "no";
  return warmOk ? "warm only" : "cold only";
}

/** What the scheduled handler did, read from what it published: fan out, or tick the agent itself. */
function scheduledLabel(b: Bench): string {
  return b.scheduledPublishedTicks > 0
    ? `${KINDS.scheduled}: the fan-out (list agents, 1 QStash batch, retention)`
    : `${KINDS.scheduled}: the agent's tick inline`;
}

function table(b: Bench): string {
  const { samples } = b;
  const rows = (Object.keys(KINDS) as Kind[]).map((kind) => {
    const warm = samples[kind].warm.map((m) => m.cpuMs);
    const cold = samples[kind].cold.map((m) => m.cpuMs);
    // Summed: a thread's schedstat lags by up to a scheduler tick at each read, which cancels out over many.
    const mainShare = sum(samples[kind].warm.map((m) => m.mainThreadMs)) / sum(warm);
    const wall = samples[kind].warm.map((m) => m.wallMs);
    const ratio = kind === "baseline" ? "1.0×" : `${(median(warm) / median(samples.baseline.warm.map((m) => m.cpuMs))).toFixed(1)}×`;
    return `| ${kind === "scheduled" ? scheduledLabel(b) : KINDS[kind]} | ${fmtMs(median(warm))} · ${fmtMs(sum(warm) / warm.length)} · ${fmtMs(percentile(warm, 95))} | ${cold.length ? `${fmtMs(median(cold))} · ${fmtMs(Math.max(...cold))}` : "–"} | ${Number.isFinite(mainShare) ? `${Math.round(100 * Math.min(1, mainShare))}%` : "–"} | ${fmtMs(median(wall))} | ${ratio} | ${fits(warm, cold)} |`;
  });
  return [
    `| invocation | CPU warm: median · mean · p95 (n=${WARM}) | CPU cold: median · max (n=${COLD}) | main thread's share (warm) | wall, warm median | warm CPU vs baseline | within Workers Free's ${FREE_PLAN_CPU_MS} ms |`,
    "|---|---|---|---|---|---|---|",
    ...rows,
  ].join("\n");
}

const NOTES = `
How it is measured: each isolate is a child process (\`bench/cpu-isolate.ts\`) that imports the
Worker's handlers and gets one invocation at a time over IPC; the Hrana server (Turso), the QStash
fake and the scripted LLM run in the bench's process, so their CPU is not in the figures. The
figure is \`process.cpuUsage()\` (user + system, every thread of the isolate: V8's garbage
collector and compiler threads too) from the handler's call to its answer's last byte and every
\`ctx.waitUntil\`; "main thread's share" is the part of it the main thread ran (Linux schedstat,
summed over the warm samples), the rest being V8's garbage collector and compiler threads. It includes the client
side of every subrequest through Node's fetch (JavaScript in Node, native in workerd), so the
Worker's own figure is lower; the baseline pays the same for its one subrequest. *Warm*: an
isolate that has run the whole cycle ${2 * WARM_UPS} times, with the agent's stored history at
${HISTORY_TOKENS.toLocaleString("en")} tokens (copies of the turns real runs stored) growing with each run
towards the 30,000 budget, where compaction summarises it back (a session in steady use; some
runs in the sample summarise). *Cold*: a fresh isolate's first invocation — configuration, wiring, the schema
check, the default agent and simulator seed, and every function's first (interpreted) run; module
evaluation is not in it (Workers counts that against its 1 s start-up limit), nor are Node's own
fetch and Web Crypto, which Node loads on first use and which the isolate uses once before
(workerd has them built in). The bench's vars differ from wrangler.toml's only in debounce windows
of 0 (the run is delivered at once), \`RECONCILE_INTERVAL_S=1\` (every tick reconciles, as the
minute's tick does with the default 60 s), no random simulated failures and no action rate limit.
Per-process caches (the agent row for 5 s, lockouts for 1 s) are warm in the warm loop; an isolate
serving one request a minute would miss them (one more Hrana round trip each).

Where a run delivery's CPU went (its isolate profiled with \`CPU_BENCH_PROF\`; 2026-12-01, issue
20). *Before*: gpt-tokenizer was about 7% of the run's samples, nearly all of it counting again
what was already counted: the final count of every request re-tokenized the whole stored history
(rebuilt as new message objects each run, so the per-message cache missed, although each
message's count is stored with it), the tool schemas (about 1,500 tokens) were tokenized twice per
LLM call, the system prompt once per run, a summary at every measure of the draft (each step of
each compaction loop), and stubbed tool outputs at every fit. *After*: messages rebuilt from the
history keep their stored counts (\`agent/prompt/turns.ts\`) and the rest is counted once; the tokenizer
is under 1% of the profile. Side by side (both versions at the same time on the same machine, load
average about 17, so higher throughout than the table above; 30 warm and 5 cold samples each): the run delivery after a webhook 108.3 → 93.6 ms warm median
(cold 442 → 394 ms), after a chat message 81.8 → 70.9 ms (cold 392 → 303 ms); the other rows
did not change beyond noise. What is left of a warm run on Node is mostly the HTTP client
(undici's fetch and its socket writes of prompts of about 120 KB, three per run; native in
workerd), the Hrana client's JSON and drizzle building the run path's statements (prepared only
for ingest; a few per cent, left as it is).
`;

export async function cpuBench(): Promise<string> {
  const world = await startWorld();
  const profilePath = process.env.CPU_BENCH_PROF;
  const warm = await startIsolate("worker", world.env);
  const runs = profilePath ? await startIsolate("worker", world.env, { profilePath }) : warm;
  const baseline = await startIsolate("baseline", world.env);
  const samples = Object.fromEntries(Object.keys(KINDS).map((k) => [k, { warm: [], cold: [] }])) as unknown as Samples;
  const b: Bench = { world, warm, runs, baseline, samples, promptTokens: [], scheduledPublishedTicks: 0, abandoned: [] };
  try {
    // Real runs store turns; the history then grows from copies of them to a session in steady use.
    let n = 0;
    for (; n < WARM_UPS; n++) await attempt(b, `warm-up cycle ${n}`, () => cycle(b, n, false));
    await world.growHistory(HISTORY_TOKENS);
    for (; n < 2 * WARM_UPS; n++) await attempt(b, `warm-up cycle ${n}`, () => cycle(b, n, false));
    b.promptTokens.length = 0;
    for (let i = 0; i < WARM; i++, n++) await attempt(b, `measured cycle ${i}`, () => cycle(b, n, true));
    const measuredPrompts = [...b.promptTokens];
    for (let i = 0; i < COLD; i++, n++) await attempt(b, `cold round ${i}`, () => coldRound(b, n));
    const machine = `Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" / ")}`;
    return `${HEADING}

${machine}; ${2 * WARM_UPS} warm-up cycles, then ${WARM} measured cycles; prompts of the measured runs ${Math.min(...measuredPrompts).toLocaleString("en")}–${Math.max(...measuredPrompts).toLocaleString("en")} tokens${b.abandoned.length ? `; ${b.abandoned.length} cycles given up part-way (${b.abandoned.join("; ").slice(0, 300)})` : ""}${profilePath ? `; run deliveries profiled into ${profilePath} (their figures include the profiler)` : ""}.

${table(b)}
${NOTES}`;
  } finally {
    await Promise.all([warm.close(), runs === warm ? null : runs.close(), baseline.close()]);
    await world.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const section = await cpuBench().catch((err: unknown) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
    process.exit(1);
  });
  console.log(section);
  // Where bench/run.ts puts it: before the scale section.
  if (process.argv.includes("--write")) writeSection(HEADING, section, "## Scale");
}
