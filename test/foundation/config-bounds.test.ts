/**
 * Every setting bounded and normalised (issue #25 item 8): each finding's bad value is refused by
 * parseConfig naming the variable, every numeric variable has an upper bound, tokens are trimmed
 * (surrounding spaces) or refused (spaces inside), `none` is the one way to write an empty approval
 * list, PUBLIC_URL is an http(s) origin and every URL from the environment is http(s).
 */
import { describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import { CONFIG_VARIABLES, ConfigError, parseConfig } from "../../runtime/config.ts";
import { AGENT_MAX_ITERATIONS_MAX, LLM_TIMEOUT_MAX_MS, SESSION_TTL_MAX_S } from "../../runtime/setting-bounds.ts";
import { signInCookie } from "../dashboard/dashboard-client.ts";
import { authHeaders, createTestDeps, testConfig, TEST_ADMIN_TOKEN } from "../support/test-deps.ts";

function refusal(vars: Record<string, string>): ConfigError {
  try {
    parseConfig(vars, "node");
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error(`accepted ${JSON.stringify(vars)}`);
}

const REFUSED: [string, string, string][] = [
  ["SESSION_TTL_S", "40000000", `must be at most ${SESSION_TTL_MAX_S} (400 days`],
  ["SESSION_IDLE_TIMEOUT_S", "40000000", "must be at most"],
  ["APPROVAL_REQUIRED_ACTIONS", ",", 'lists no action: write "none"'],
  ["APPROVAL_REQUIRED_ACTIONS", " , , ", 'write "none"'],
  ["APPROVAL_REQUIRED_ACTIONS", "none,destroy", 'unknown action "none"'],
  ["ADMIN_TOKEN", "test-admin token-0123456789", "must not contain spaces"],
  ["OPENAI_API_KEY", "sk-abc\ndef", "must not contain spaces"],
  ["VAST_API_KEY", "ab cd", "must not contain spaces"],
  ["QSTASH_TOKEN", "ab\tcd", "must not contain spaces"],
  ["DATABASE_AUTH_TOKEN", "ey J", "must not contain spaces"],
  ["PUBLIC_URL", "javascript:x", "must be an http:// or https:// URL (got javascript:)"],
  ["PUBLIC_URL", "https://fleet.example/app", "must be an origin"],
  ["PUBLIC_URL", "https://user:pw@fleet.example", "must be an origin"],
  ["PUBLIC_URL", "https://fleet.example/?next=1", "must be an origin"],
  ["SLACK_WEBHOOK_URL", "javascript:alert(1)", "must be an http:// or https:// URL"],
  ["DISCORD_WEBHOOK_URL", "file:///etc/passwd", "(got file:)"],
  ["NTFY_URL", "gopher://ntfy.example/x", "(got gopher:)"],
  ["OPENAI_BASE_URL", "file:///v1", "(got file:)"],
  ["VAST_URL", "javascript:x", "(got javascript:)"],
  ["QSTASH_URL", "ftp://qstash.example", "(got ftp:)"],
  ["AGENT_MAX_ITERATIONS", String(AGENT_MAX_ITERATIONS_MAX + 1), `must be at most ${AGENT_MAX_ITERATIONS_MAX}`],
  ["LLM_TIMEOUT_MS", String(LLM_TIMEOUT_MAX_MS + 1), `must be at most ${LLM_TIMEOUT_MAX_MS}`],
  ["RECONCILE_INTERVAL_S", "1.5", "must be a whole number"],
];

describe("every setting bounded and normalised", () => {
  it.each(REFUSED)("refuses %s=%j naming it", (variable, value, fragment) => {
    const err = refusal({ [variable]: value });
    expect(err.variable).toBe(variable);
    expect(err.message).toContain(`Configuration error: ${variable} `);
    expect(err.message).toContain(fragment);
  });

  it("gives every numeric variable an upper bound", () => {
    const numeric = CONFIG_VARIABLES.filter((name) => /expected number/.test(refusalOrNull({ [name]: "abc" }) ?? ""));
    expect(numeric.length).toBeGreaterThan(40);
    for (const name of numeric) {
      const err = refusal({ [name]: "1e12" });
      expect(err.variable, name).toBe(name);
      expect(err.message, name).toContain("must be at most");
    }
  });

  it("accepts each bound itself and `none` as the empty approval list", () => {
    const config = parseConfig(
      {
        SESSION_TTL_S: String(SESSION_TTL_MAX_S),
        AGENT_MAX_ITERATIONS: String(AGENT_MAX_ITERATIONS_MAX),
        LLM_TIMEOUT_MS: String(LLM_TIMEOUT_MAX_MS),
        APPROVAL_REQUIRED_ACTIONS: "none",
      },
      "node",
    );
    expect(config.session.ttlMs).toBe(SESSION_TTL_MAX_S * 1000);
    expect(config.agentMaxIterations).toBe(AGENT_MAX_ITERATIONS_MAX);
    expect(config.approvalRequired).toEqual([]);
    expect(parseConfig({}, "node").approvalRequired).toEqual(["destroy", "replace"]);
    expect(parseConfig({ APPROVAL_REQUIRED_ACTIONS: " stop , destroy " }, "node").approvalRequired).toEqual(["stop", "destroy"]);
  });

  it("keeps PUBLIC_URL as its bare origin and trims URLs", () => {
    expect(parseConfig({ PUBLIC_URL: " https://Fleet.Example:443/ " }, "node").publicUrl).toBe("https://fleet.example");
    expect(parseConfig({ PUBLIC_URL: "http://127.0.0.1:8787" }, "node").publicUrl).toBe("http://127.0.0.1:8787");
    expect(parseConfig({ NTFY_URL: " https://ntfy.sh/topic " }, "node").channels.ntfy).toBe("https://ntfy.sh/topic");
  });

  it("trims a token pasted with surrounding spaces, so the admin can authenticate", async () => {
    const config = testConfig({ ADMIN_TOKEN: `  ${TEST_ADMIN_TOKEN}\n` });
    expect(config.adminToken).toBe(TEST_ADMIN_TOKEN);
    const deps = await createTestDeps({ config });
    const app = buildApp(() => deps);
    expect((await app.request("/api/agents", { headers: authHeaders() })).status).toBe(200);
  });

  it("signs in with a session as long as the bound allows (the cookie is accepted)", async () => {
    const deps = await createTestDeps({
      vars: { SESSION_TTL_S: String(SESSION_TTL_MAX_S), SESSION_IDLE_TIMEOUT_S: String(SESSION_TTL_MAX_S) },
    });
    const cookie = await signInCookie(
      buildApp(() => deps),
      TEST_ADMIN_TOKEN,
    );
    expect(cookie).toMatch(/=[0-9a-f]{64}$/);
  });
});

function refusalOrNull(vars: Record<string, string>): string | null {
  try {
    parseConfig(vars, "node");
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}
