/**
 * The Worker's cron handler with a configuration error: the tick cannot run, and that is one
 * log line per tick, never an uncaught error (whose stack workerd would print). The fetch
 * handler still answers a 500 JSON naming the variable.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ExecutionContext } from "hono";
import { handleFetch, handleScheduled } from "../../functions/host/worker-host.ts";

afterEach(() => vi.restoreAllMocks());

function context() {
  const waited: Promise<unknown>[] = [];
  const ctx = {
    waitUntil: (p: Promise<unknown>) => waited.push(p),
    passThroughOnException: () => {},
    props: {},
  } as unknown as ExecutionContext;
  return { ctx, waited };
}

describe("the Worker with a configuration error", () => {
  it("logs one line per cron tick and throws nothing", async () => {
    const lines: string[] = [];
    vi.spyOn(console, "error").mockImplementation((line: string) => void lines.push(line));
    const env = {
      DATABASE_URL: "libsql://db.example.turso.io",
      ADMIN_TOKEN: "worker-admin-token-0123456789",
      APPROVAL_REQUIRED_ACTIONS: "destory",
    };
    for (let tick = 1; tick <= 2; tick++) {
      const { ctx, waited } = context();
      handleScheduled(env, ctx);
      await expect(Promise.all(waited)).resolves.toBeDefined();
      expect(lines).toHaveLength(tick);
    }
    for (const line of lines) {
      expect(line.split("\n")).toHaveLength(1);
      expect(JSON.parse(line)).toMatchObject({
        level: "error",
        variable: "APPROVAL_REQUIRED_ACTIONS",
        error: expect.stringContaining('unknown action "destory"'),
      });
    }
    const res = await handleFetch(new Request("https://w.example/healthz"), env, context().ctx);
    expect(res.status).toBe(500);
    expect(await res.json()).toMatchObject({ variable: "APPROVAL_REQUIRED_ACTIONS" });
  });
});
