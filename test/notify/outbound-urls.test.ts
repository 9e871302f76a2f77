/**
 * Outbound URL rules (issue #25): a channel URL set through the agents API must be https to a
 * public host — every form from the finding (javascript:, file:, gopher:, the metadata address,
 * IPv6 loopback, 10/8, a decimal IPv4, an IPv4-mapped IPv6) is refused with a 400 naming the
 * field and nothing is written; ALLOW_PRIVATE_URLS=true accepts http://127.0.0.1. Deliveries
 * do not follow redirects (a 302 is a failed delivery, its target never hit), and a failed
 * delivery's error body is shown to admins only: viewers see its HTTP status.
 */
import { afterEach, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { buildApp } from "../../functions/app.ts";
import { createOperator } from "../../auth/operators-store.ts";
import { deliverNotification } from "../../notify/deliver-notification.ts";
import { notifyHuman } from "../../notify/notify-human.ts";
import { agents, notificationDeliveries } from "../../schema/index.ts";
import { authHeaders, createTestDeps, type TestDeps } from "../support/test-deps.ts";
import { startReceiver, type Receiver } from "./receiver.ts";

const receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

async function api(deps: TestDeps, method: string, path: string, body?: unknown, headers: Record<string, string> = authHeaders()) {
  const res = await buildApp(() => deps).request(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as Record<string, any> };
}

const REFUSED = [
  "javascript:alert(1)",
  "file:///etc/passwd",
  "gopher://127.0.0.1:6379/_INFO",
  "http://169.254.169.254/latest/meta-data/",
  "https://169.254.169.254/latest/meta-data/",
  "http://[::1]/",
  "https://[::1]/hook",
  "http://10.0.0.1/",
  "https://10.0.0.1/hook",
  "https://172.16.5.4/hook",
  "https://192.168.1.10/hook",
  "http://2130706433/",
  "https://2130706433/",
  "https://0x7f.0.0.1/",
  "https://[::ffff:127.0.0.1]/",
  "https://[fe80::1]/",
  "https://[fd00::1]/",
  "https://localhost/hook",
  "https://0.0.0.0/",
];

describe("channel URLs through the agents API", () => {
  it.each(REFUSED)("refuses %s naming the field, and writes nothing", async (url) => {
    const deps = await createTestDeps();
    const created = await api(deps, "POST", "/api/agents", { id: "team-b", settings: { channels: { slack: url } } });
    expect(created.status).toBe(400);
    expect(created.json.error).toMatch(/^invalid body: settings\.channels\.slack: /);
    expect(await deps.db.select().from(agents).where(eq(agents.id, "team-b"))).toEqual([]);
    const patched = await api(deps, "PATCH", "/api/agents/default", { settings: { channels: { ntfy: url } } });
    expect(patched.status).toBe(400);
    expect(patched.json.error).toMatch(/^invalid body: settings\.channels\.ntfy: /);
    expect((await deps.db.select().from(agents).where(eq(agents.id, "default")))[0]!.settings).toEqual({});
  });

  it("accepts a public https URL, and a loopback http one only with ALLOW_PRIVATE_URLS=true", async () => {
    const strict = await createTestDeps();
    expect(
      (await api(strict, "POST", "/api/agents", { id: "a", settings: { channels: { slack: "https://hooks.slack.com/services/T/B/x" } } }))
        .status,
    ).toBe(201);
    expect(
      (await api(strict, "POST", "/api/agents", { id: "b", settings: { channels: { slack: "http://127.0.0.1:9000/hook" } } })).status,
    ).toBe(400);
    const local = await createTestDeps({ vars: { ALLOW_PRIVATE_URLS: "true" } });
    expect(
      (await api(local, "POST", "/api/agents", { id: "b", settings: { channels: { slack: "http://127.0.0.1:9000/hook" } } })).status,
    ).toBe(201);
    // Even then the scheme must be http(s).
    expect(
      (await api(local, "POST", "/api/agents", { id: "c", settings: { channels: { slack: "gopher://127.0.0.1:6379" } } })).status,
    ).toBe(400);
  });
});

describe("deliveries to a channel URL", () => {
  it("do not follow a redirect: a 302 fails the delivery and its target is never asked", async () => {
    const target = await startReceiver("/internal", 200);
    const hook = await startReceiver("/hook", 302);
    hook.redirectTo = target.url;
    receivers.push(target, hook);
    const deps = await createTestDeps({ vars: { SLACK_WEBHOOK_URL: hook.url } });
    await notifyHuman(deps, { agentId: "default", runId: null, title: "sim-1 down", body: "no heartbeat", severity: "warning" });
    const [delivery] = await deps.db.select().from(notificationDeliveries);
    await deliverNotification(deps, delivery!.id);
    expect(hook.received).toHaveLength(1);
    expect(target.received).toHaveLength(0);
    expect((await deps.db.select().from(notificationDeliveries))[0]).toMatchObject({ status: "failed", lastStatus: 302 });
  });

  it("show a failed delivery's answer to admins only; viewers and operators see its status", async () => {
    const hook = await startReceiver("/hook", 400);
    hook.errorBody = "INTERNAL-ONLY metadata-token=abc123";
    receivers.push(hook);
    const deps = await createTestDeps({ vars: { SLACK_WEBHOOK_URL: hook.url } });
    await notifyHuman(deps, { agentId: "default", runId: null, title: "sim-1 down", body: "no heartbeat", severity: "warning" });
    await deliverNotification(deps, (await deps.db.select().from(notificationDeliveries))[0]!.id);
    const tokenOf = async (role: "viewer" | "operator") =>
      (await createOperator(deps.db, { name: `${role}-1`, role, createdBy: "admin", now: deps.clock.now() })).token;
    const as = async (token?: string) =>
      (await api(deps, "GET", "/api/agents/default/notifications", undefined, token ? { Authorization: `Bearer ${token}` } : authHeaders()))
        .json;

    const admin = await as();
    expect(admin.notifications[0].deliveries[0]).toMatchObject({
      status: "failed",
      lastStatus: 400,
      lastError: expect.stringContaining("metadata-token=abc123"),
    });
    for (const role of ["viewer", "operator"] as const) {
      const seen = await as(await tokenOf(role));
      expect(seen.notifications[0].deliveries[0]).toMatchObject({ status: "failed", lastStatus: 400, lastError: null });
      expect(JSON.stringify(seen)).not.toContain("abc123");
    }
  });
});
