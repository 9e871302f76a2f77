/**
 * The HTTP benchmark: the real Node host (file database, started as `npm start` starts it) and a
 * bare baseline (bench/baseline-server.ts) side by side, both driven over loopback HTTP with
 * pre-signed requests, repetitions interleaved so drift on a shared machine hits both alike.
 *
 * - throughput and latency for signed webhooks and chat messages at 32 and 64 connections, every
 *   report stored (bench/processes.ts STORE_EVERY_REPORT), and one instance flooding past the bound;
 * - history growth 0 → 50,000 events: cost per event, GET instances, RSS and database size.
 * Every figure carries the machine's 1-minute load average when it was taken.
 */
import { drive, type PreparedRequest } from "./load.ts";
import { loadNow, median, queue, sample, signedWebhook, summary, type Sample } from "./samples.ts";
import {
  BENCH_ADMIN_TOKEN,
  dbBytes,
  dbBytesByObject,
  rssMb,
  startBaseline,
  startFleetwarden,
  WEBHOOK_FLEET,
  type Server,
} from "./processes.ts";
import { fmtMs, type Row } from "./harness.ts";

const REPS = 5;
const RUN_MS = 2000;
const CONNECTIONS = [32, 64] as const;
const FLEET = 200;
const STATES = ["running", "loading", "exited"] as const;
const GROWTH_CHECKPOINTS = [0, 10_000, 25_000, 50_000];
let sequence = 0;

function webhook(tag: string): PreparedRequest {
  const n = sequence++;
  return signedWebhook(
    "default",
    `${tag}_${n}`,
    JSON.stringify({ instanceId: `i-${n % FLEET}`, state: STATES[Math.floor(n / FLEET) % STATES.length] }),
  );
}

function chat(): PreparedRequest {
  return {
    path: "/api/agents/default/messages",
    headers: { "content-type": "application/json", authorization: `Bearer ${BENCH_ADMIN_TOKEN}` },
    body: JSON.stringify({ text: `status of i-${sequence++ % FLEET}?` }),
  };
}

/** Requests built (and signed) before the clock starts; enough for the fastest server. */
function prepared(kind: "webhooks" | "chat", count: number, tag: string): () => PreparedRequest | null {
  return queue(Array.from({ length: count }, () => (kind === "webhooks" ? webhook(tag) : chat())));
}

/** Enough requests that the fastest server is still busy when RUN_MS ends. */
const SAMPLE_REQUESTS = 15_000;
/** Requests of each kind every server gets before the first sample (untimed): JIT and caches warm. */
const WARM_UP = 3_000;

function quietSample(server: Server, kind: "webhooks" | "chat", connections: number, tag: string): Promise<Sample> {
  return sample(server.port, connections, prepared(kind, SAMPLE_REQUESTS, tag), RUN_MS, tag);
}

async function warmUp(server: Server, tag: string): Promise<void> {
  for (const kind of ["webhooks", "chat"] as const) await drive(server.port, 32, prepared(kind, WARM_UP, `${tag}warm${kind}`), 60_000);
}

/**
 * `reps` samples of each server, interleaved and alternating who goes first so drift on a shared
 * machine hits both alike; the medians of each side.
 */
async function interleaved(
  fw: Server,
  base: Server,
  reps: number,
  take: (server: Server, who: "fw" | "base", rep: number) => Promise<Sample>,
) {
  const samples: Record<"fw" | "base", Sample[]> = { fw: [], base: [] };
  for (let rep = 0; rep < reps; rep++) {
    for (const who of rep % 2 === 0 ? (["fw", "base"] as const) : (["base", "fw"] as const)) {
      samples[who].push(await take(who === "fw" ? fw : base, who, rep));
    }
  }
  return { f: summary(samples.fw), b: summary(samples.base) };
}

/** The two rows of one comparison: fleetwarden's with its ratios to the baseline, and the baseline's. */
function sideBySide(benchmark: string, variants: { fw: string; base: string }, { f, b }: Awaited<ReturnType<typeof interleaved>>): Row[] {
  const result = (x: typeof f) => `${x.rps.toFixed(0)} req/s · p50 ${fmtMs(x.p50)} · p99 ${fmtMs(x.p99)} · load ${x.loads}`;
  return [
    {
      benchmark,
      variant: variants.fw,
      result: result(f),
      ratio: `${(f.rps / b.rps).toFixed(2)}× req/s · ${(f.p99 / b.p99).toFixed(2)}× p99`,
    },
    { benchmark, variant: variants.base, result: result(b), ratio: "1.00×" },
  ];
}

async function throughput(rows: Row[]): Promise<void> {
  const fw = await startFleetwarden({ ...WEBHOOK_FLEET, DEBOUNCE_STATE_MS: "3600000", DEBOUNCE_HUMAN_MS: "3600000" });
  const base = await startBaseline();
  try {
    await warmUp(fw, "fw");
    await warmUp(base, "base");
    for (const kind of ["webhooks", "chat"] as const) {
      for (const connections of CONNECTIONS) {
        const medians = await interleaved(fw, base, REPS, (server, who, rep) =>
          quietSample(server, kind, connections, `${who}${rep}c${connections}`),
        );
        rows.push(
          ...sideBySide(
            `${kind} over HTTP, ${connections} connections, quiet (median of ${REPS})`,
            { fw: "fleetwarden (Node host, file DB)", base: "baseline (Hono + standardwebhooks + 1 INSERT)" },
            medians,
          ),
        );
      }
    }
  } finally {
    await fw.stop();
    await base.stop();
  }
}

/** Reports of one instance only, as a runaway reporter sends them. */
function floodOf(count: number, tag: string): () => PreparedRequest | null {
  return queue(
    Array.from({ length: count }, (_, i) =>
      signedWebhook("default", `${tag}_${sequence++}`, JSON.stringify({ instanceId: "i-flood", state: STATES[i % STATES.length] })),
    ),
  );
}

/**
 * One instance floods its agent: with the flood bound as deployed (REPORTS_STORED_PER_MINUTE,
 * default 60), past it a report only updates the instance's row; the baseline stores every one.
 */
async function flood(rows: Row[]): Promise<void> {
  const { REPORTS_STORED_PER_MINUTE: _storeAll, ...asDeployed } = WEBHOOK_FLEET;
  const fw = await startFleetwarden({ ...asDeployed, DEBOUNCE_STATE_MS: "3600000", DEBOUNCE_HUMAN_MS: "3600000" });
  const base = await startBaseline();
  const REPS_FLOOD = 3;
  try {
    const medians = await interleaved(fw, base, REPS_FLOOD, (server, who, rep) =>
      sample(server.port, 32, floodOf(SAMPLE_REQUESTS, `flood${who}${rep}`), RUN_MS, `flood ${who}`),
    );
    rows.push(
      ...sideBySide(
        `one instance floods its agent, 32 connections (median of ${REPS_FLOOD})`,
        {
          fw: "fleetwarden, flood bound as deployed (60 stored a minute, the rest update the row)",
          base: "baseline (stores every report)",
        },
        medians,
      ),
    );
  } finally {
    await fw.stop();
    await base.stop();
  }
}

async function getInstancesMs(server: Server): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 20; i++) {
    const t0 = performance.now();
    const res = await fetch(`http://127.0.0.1:${server.port}/api/agents/default/instances`, {
      headers: { authorization: `Bearer ${BENCH_ADMIN_TOKEN}` },
    });
    await res.arrayBuffer();
    times.push(performance.now() - t0);
  }
  return median(times);
}

/** History growth: the cost of an event and of GET instances at 0 → 50,000 stored events. */
async function growth(rows: Row[]): Promise<string> {
  const fw = await startFleetwarden({ ...WEBHOOK_FLEET, DEBOUNCE_STATE_MS: "3600000", DEBOUNCE_HUMAN_MS: "3600000" });
  const base = await startBaseline();
  const lines = ["| stored events | ms per event (32 conn.) | GET instances (200) | RSS | DB size | load |", "|---|---|---|---|---|---|"];
  const points: { events: number; perEvent: number; list: number; bytes: number; rss: number }[] = [];
  try {
    let stored = 0;
    for (const checkpoint of GROWTH_CHECKPOINTS) {
      if (checkpoint > stored) {
        const fill = prepared("webhooks", checkpoint - stored, `grow${checkpoint}`);
        const filled = await drive(fw.port, 64, fill, 600_000);
        if (filled.errors) throw new Error(`growth fill: ${filled.errors} requests failed`);
        stored = checkpoint;
      }
      const probe = await drive(fw.port, 32, prepared("webhooks", 1500, `probe${checkpoint}`), 60_000);
      stored += probe.requests;
      const point = {
        events: stored,
        perEvent: 1000 / probe.reqPerSec,
        list: await getInstancesMs(fw),
        bytes: await dbBytes(fw.dbPath),
        rss: rssMb(fw.pid),
      };
      points.push(point);
      lines.push(
        `| ${point.events.toLocaleString("en")} | ${fmtMs(point.perEvent)} | ${fmtMs(point.list)} | ${point.rss.toFixed(0)} MB | ${(point.bytes / 1e6).toFixed(1)} MB | ${loadNow()} |`,
      );
    }
    const first = points[0]!;
    const last = points[points.length - 1]!;
    const perThousand = (last.bytes - first.bytes) / ((last.events - first.events) / 1000);
    // What the bytes are: tables and indexes that hold at least 1% of the file, per 1,000 events,
    // and the LLM call transcripts (llm_calls, kept LLM_TRANSCRIPT_DAYS) whatever their share.
    const objects = await dbBytesByObject(fw.dbPath);
    lines.push(
      "",
      `Database bytes by table and index after ${last.events.toLocaleString("en")} webhooks (SQLite's dbstat), per 1,000 webhooks:`,
      "",
    );
    lines.push("| table or index | KiB per 1,000 webhooks | share |", "|---|---|---|");
    const total = objects.reduce((sum, o) => sum + o.bytes, 0);
    for (const o of objects.filter((o) => o.bytes >= total / 100 || o.name.startsWith("llm_calls"))) {
      lines.push(`| ${o.name} | ${(o.bytes / 1024 / (last.events / 1000)).toFixed(1)} | ${((100 * o.bytes) / total).toFixed(0)}% |`);
    }
    // The baseline stores the same webhooks: its bytes per 1,000 events, for the ratio.
    const baseFill = await drive(base.port, 64, prepared("webhooks", 10_000, "basegrow"), 600_000);
    const baseBytes = (await dbBytes(base.dbPath)) / (baseFill.requests / 1000);
    rows.push({
      benchmark: `history growth ${first.events.toLocaleString("en")} → ${last.events.toLocaleString("en")} events`,
      variant: "fleetwarden: cost per event at the end / at the start",
      result: `${fmtMs(first.perEvent)} → ${fmtMs(last.perEvent)}`,
      ratio: `${(last.perEvent / first.perEvent).toFixed(2)}×`,
    });
    rows.push({
      benchmark: `history growth ${first.events.toLocaleString("en")} → ${last.events.toLocaleString("en")} events`,
      variant: "fleetwarden: GET instances (200 instances) at the end / at the start",
      result: `${fmtMs(first.list)} → ${fmtMs(last.list)}`,
      ratio: `${(last.list / first.list).toFixed(2)}×`,
    });
    rows.push({
      benchmark: "database size per 1,000 webhooks",
      variant: "fleetwarden vs baseline",
      result: `${(perThousand / 1024).toFixed(0)} KiB vs ${(baseBytes / 1024).toFixed(0)} KiB; RSS ${last.rss.toFixed(0)} MB after ${last.events.toLocaleString("en")} events`,
      ratio: `${(perThousand / baseBytes).toFixed(2)}× bytes`,
    });
  } finally {
    await fw.stop();
    await base.stop();
  }
  return lines.join("\n");
}

export async function httpBench(): Promise<{ rows: Row[]; growthTable: string }> {
  const rows: Row[] = [];
  await throughput(rows);
  await flood(rows);
  const growthTable = await growth(rows);
  return { rows, growthTable };
}
