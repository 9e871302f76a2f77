/**
 * The bare baseline of bench/metrics.bench.ts: plain Hono on @hono/node-server and one libSQL
 * client answering GET /metrics from the same seeded database file with the same grouped counts
 * (instances by state, runs by status and decider with their tokens, actions by kind and status,
 * pending approvals, deliveries by channel and outcome), rendered as Prometheus text by hand, with
 * a bearer check. What it leaves out is what fleetwarden adds: the spend and burn figures, the
 * histogram, watchdog conditions, the scheduler's state, HELP/TYPE lines and the auth lookup.
 * Run as a child process: `tsx bench/metrics-baseline-server.ts <db-file> <port> <token>`.
 */
import { serve } from "@hono/node-server";
import { createClient } from "@libsql/client";
import { Hono } from "hono";

const [path, port, token] = process.argv.slice(2) as [string, string, string];
const db = createClient({ url: `file:${path}`, timeout: 5000, concurrency: 1 });
await db.execute("PRAGMA journal_mode = WAL");

const QUERIES = [
  "select agent_id, state, count(*) from instances where gone_at is null group by agent_id, state",
  "select agent_id, status, decider, count(*), sum(prompt_tokens), sum(completion_tokens) from runs group by agent_id, status, decider",
  "select agent_id, kind, status, count(*) from actions group by agent_id, kind, status",
  "select agent_id, count(*) from approvals where status = 'pending' group by agent_id",
  "select n.agent_id, d.channel, d.status, count(*) from notification_deliveries d join notifications n on n.id = d.notification_id group by n.agent_id, d.channel, d.status",
];

const app = new Hono().get("/metrics", async (c) => {
  if (c.req.header("Authorization") !== `Bearer ${token}`) return c.json({ error: "unauthorized" }, 401);
  const results = await db.batch(QUERIES, "read");
  const lines = results.flatMap((r, i) =>
    r.rows.map((row) => {
      const values = Array.from(row);
      return `m${i}{${values.slice(0, -1).join(",")}} ${values.at(-1)}`;
    }),
  );
  return c.text(`${lines.join("\n")}\n`);
});

serve({ fetch: app.fetch, port: Number(port), hostname: "127.0.0.1" }, () => console.log("ready"));
