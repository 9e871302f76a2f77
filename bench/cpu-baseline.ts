/**
 * The bare baseline of bench/cpu.bench.ts: what any Worker taking a signed webhook must do at
 * least — a plain Hono app that verifies the Standard Webhooks signature (`standardwebhooks`) and
 * writes one row with the libSQL web client over Hrana (`@libsql/client/web`, as the Worker
 * talks to Turso). fleetwarden's webhook row is compared with it.
 */
import { createClient } from "@libsql/client/web";
import { Hono } from "hono";
import { Webhook } from "standardwebhooks";

/** The table the baseline writes (created by the bench before the baseline runs). */
export const BASELINE_TABLE =
  "create table if not exists bench_inbox (id integer primary key, dedup_key text not null unique, body text not null, created_at integer not null)";

export function bareBaselineApp(env: Record<string, string>) {
  const db = createClient({ url: env.DATABASE_URL!, authToken: env.DATABASE_AUTH_TOKEN });
  const webhook = new Webhook(env.WEBHOOK_SECRET!);
  return new Hono().post("/webhooks/:agent/instances", async (c) => {
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
      sql: "insert into bench_inbox (dedup_key, body, created_at) values (?, ?, ?) on conflict do nothing",
      args: [headers["webhook-id"], raw, Date.now()],
    });
    return c.json({ ok: true }, 202);
  });
}
