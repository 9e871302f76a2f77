/**
 * The bare baseline the HTTP benchmark compares fleetwarden with: a plain Hono app on
 * @hono/node-server that verifies the Standard Webhooks signature with `standardwebhooks` (or a
 * bearer token for chat) and does one INSERT into a libSQL file table per request. Same
 * durability settings as fleetwarden's embedded database (WAL, synchronous = FULL by default, or
 * NORMAL when asked, as DATABASE_SYNC=normal does), so the ratio measures fleetwarden's own work,
 * not a different fsync policy.
 * Run as a child process by bench/http.bench.ts: `tsx bench/baseline-server.ts <db-file> <port> <secret> <token> [full|normal]`.
 */
import { serve } from "@hono/node-server";
import { createClient } from "@libsql/client";
import { Hono } from "hono";
import { Webhook } from "standardwebhooks";

const [path, port, secret, token, sync = "full"] = process.argv.slice(2) as [string, string, string, string, string?];
const db = createClient({ url: `file:${path}`, timeout: 5000, concurrency: 1 });
await db.execute("PRAGMA journal_mode = WAL");
await db.execute(`PRAGMA synchronous = ${sync === "normal" ? "NORMAL" : "FULL"}`);
await db.execute(
  "create table if not exists inbox (id integer primary key, dedup_key text not null unique, body text not null, created_at integer not null)",
);
const webhook = new Webhook(secret);

const app = new Hono()
  .post("/webhooks/:agent/instances", async (c) => {
    const raw = await c.req.text();
    const headers = {
      "webhook-id": c.req.header("webhook-id") ?? "",
      "webhook-timestamp": c.req.header("webhook-timestamp") ?? "",
      "webhook-signature": c.req.header("webhook-signature") ?? "",
    };
    try {
      webhook.verify(raw, headers);
    } catch {
      return c.json({ error: "signature rejected" }, 401);
    }
    await db.execute({
      sql: "insert into inbox (dedup_key, body, created_at) values (?, ?, ?) on conflict do nothing",
      args: [headers["webhook-id"], raw, Date.now()],
    });
    return c.json({ ok: true }, 202);
  })
  .post("/api/agents/:agent/messages", async (c) => {
    if (c.req.header("Authorization") !== `Bearer ${token}`) return c.json({ error: "unauthorized" }, 401);
    const { text } = await c.req.json<{ text: string }>();
    await db.execute({
      sql: "insert into inbox (dedup_key, body, created_at) values (?, ?, ?)",
      args: [crypto.randomUUID(), text, Date.now()],
    });
    return c.json({ ok: true }, 202);
  });

serve({ fetch: app.fetch, port: Number(port), hostname: "127.0.0.1" }, () => console.log("ready"));
