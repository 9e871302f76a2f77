/**
 * Cross-origin writes with the dashboard's cookie, in a real browser. A page served from another
 * port of the same host is the same *site* as the dashboard, so Chromium sends the SameSite=Strict
 * session cookie with its form posts: only the Origin check and the per-session CSRF token stand
 * between it and the API. That page tries a form post to the API's session reset, a no-cors
 * fetch to the API's trigger, and a form post to the dashboard's trigger; each is refused (the
 * 403 proves the cookie was sent) and nothing is written. The dashboard's own page, with its
 * session's token, can still write.
 *
 * Without Chromium the test is skipped with a warning, except under CI=true (as dashboard.test.ts).
 */
import { createClient } from "@libsql/client";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startNodeHost, type NodeHost } from "../../functions/host/node-host.ts";
import { silentLogger } from "../support/silent-logger.ts";

const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
const ADMIN_TOKEN = "cross-origin-admin-token-0123456789";
const haveChromium = existsSync(CHROMIUM);
const skip = !haveChromium && process.env.CI !== "true";
if (skip) console.warn(`[browser test skipped] ${CHROMIUM} was not found (apt-get install -y chromium).`);

function attackerPage(target: string): string {
  return `<!doctype html><html><body>
<form id="api" method="post" action="${target}/api/agents/default/session/reset"><input name="x" value="1"></form>
<form id="dash" method="post" action="${target}/trigger"><input name="back" value="/"></form>
<script>
  window.fetchDone = fetch("${target}/api/agents/default/trigger", { method: "POST", mode: "no-cors", credentials: "include",
    headers: { "Content-Type": "text/plain" }, body: JSON.stringify({ reason: "forged" }) }).then(() => "sent", (e) => String(e));
</script></body></html>`;
}

describe.skipIf(skip)("cookie writes from another origin, in Chromium", () => {
  let host: NodeHost;
  let attacker: Server;
  let attackerUrl: string;
  let browser: Browser;
  let dir: string;

  beforeAll(async () => {
    if (!haveChromium) throw new Error(`CI=true but ${CHROMIUM} is missing`);
    dir = mkdtempSync(join(tmpdir(), "fleetwarden-xorigin-"));
    host = await startNodeHost(
      { PORT: "0", DATABASE_URL: `file:${join(dir, "fleetwarden.db")}`, ADMIN_TOKEN, SIMULATOR_FAILURE_RATE: "0" },
      { log: silentLogger },
    );
    attacker = createServer((_req, res) => {
      res.writeHead(200, { "Content-Type": "text/html" });
      res.end(attackerPage(host.url));
    });
    await new Promise<void>((ready) => attacker.listen(0, "127.0.0.1", ready));
    attackerUrl = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}`;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
      ],
    });
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((done) => attacker?.close(done));
    await host?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const api = async (path: string) =>
    (await fetch(`${host.url}${path}`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } })).json() as Promise<Record<string, unknown>>;

  it("refuses every forged write (403 with the cookie sent) and writes nothing; the dashboard's own page can write", {
    timeout: 120_000,
  }, async () => {
    expect(new URL(attackerUrl).port).not.toBe(new URL(host.url).port);
    const context = await browser.newContext();
    const dashboard = await context.newPage();
    await dashboard.goto(`${host.url}/sign-in`);
    await dashboard.getByLabel("Admin token").fill(ADMIN_TOKEN);
    await dashboard.getByRole("button", { name: "Sign in" }).click();
    await dashboard.getByRole("heading", { name: "Overview" }).waitFor({ timeout: 20_000 });
    const before = await api("/api/agents/default");

    const evil = await context.newPage();
    await evil.goto(attackerUrl);
    expect(await evil.evaluate("window.fetchDone")).toBe("sent");
    const [apiAnswer] = await Promise.all([
      evil.waitForResponse(`${host.url}/api/agents/default/session/reset`),
      evil.evaluate("document.getElementById('api').submit()"),
    ]);
    expect(apiAnswer.status()).toBe(403);
    expect(await apiAnswer.text()).toContain("cookie-authenticated writes must come from this site");

    await evil.goto(attackerUrl);
    const [dashAnswer] = await Promise.all([
      evil.waitForResponse(`${host.url}/trigger`),
      evil.evaluate("document.getElementById('dash').submit()"),
    ]);
    expect(dashAnswer.status()).toBe(403);

    const after = await api("/api/agents/default");
    expect(after.sessionEpoch).toBe(before.sessionEpoch);
    const db = createClient({ url: `file:${join(dir, "fleetwarden.db")}` });
    const forged = await db.execute("select count(*) as n from events where source in ('manual', 'human')");
    db.close();
    expect(Number(forged.rows[0]!.n)).toBe(0);
    expect((await api("/api/operators")).activity).toEqual([]);

    // The dashboard's own page, with its session's token: the same API write is accepted.
    const ownWrite = await dashboard.evaluate(async () => {
      const token = (document.querySelector('input[name="_csrf"]') as HTMLInputElement).value;
      const post = (headers: Record<string, string>) =>
        fetch("/api/agents/default/trigger", {
          method: "POST",
          headers: { "Content-Type": "application/json", ...headers },
          body: "{}",
        }).then((r) => r.status);
      return { without: await post({}), with: await post({ "X-CSRF-Token": token }) };
    });
    expect(ownWrite).toEqual({ without: 403, with: 202 });
    const activity = (await api("/api/operators")).activity as { operator: string; action: string }[];
    expect(activity.map((a) => [a.operator, a.action])).toEqual([["admin", "trigger"]]);
    await context.close();
  });
});
