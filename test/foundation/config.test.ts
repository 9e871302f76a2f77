import { describe, expect, it } from "vitest";
import { ConfigError, parseConfig } from "../../runtime/config.ts";

describe("configuration", () => {
  it("starts with no configuration at all on Node, with the documented defaults", () => {
    const config = parseConfig({}, "node");
    expect(config.databaseUrl).toBe("file:./data/fleetwarden.db");
    expect(config.scheduler).toBe("local");
    expect(config.llm).toBeNull();
    expect(config.provider).toBe("simulator");
    expect(config).toMatchObject({
      debounceHumanMs: 2000,
      debounceStateMs: 10000,
      runLeaseMs: 600000,
      contextBudgetTokens: 30000,
      port: 8787,
    });
  });

  it("treats an empty variable as unset", () => {
    expect(parseConfig({ PORT: "", OPENAI_API_KEY: "  " }, "node")).toMatchObject({ port: 8787, llm: null });
  });

  it.each([
    [{ PORT: "eighty" }, "PORT"],
    [{ RUN_LEASE_MS: "-5" }, "RUN_LEASE_MS"],
    [{ WEBHOOK_SECRET: "plain-secret" }, "WEBHOOK_SECRET"],
    [{ OPENAI_BASE_URL: "not a url" }, "OPENAI_BASE_URL"],
    [{ ADMIN_TOKEN: "short" }, "ADMIN_TOKEN"],
    [{ SCHEDULER: "cron" }, "SCHEDULER"],
  ])("rejects %j naming %s", (vars, name) => {
    expect(() => parseConfig(vars, "node")).toThrow(ConfigError);
    try {
      parseConfig(vars, "node");
    } catch (err) {
      expect((err as ConfigError).variable).toBe(name);
      expect((err as Error).message).toContain(name);
    }
  });

  it("requires a database URL and admin token on Workers", () => {
    expect(() => parseConfig({ ADMIN_TOKEN: "x".repeat(20) }, "worker")).toThrow(/DATABASE_URL/);
    expect(() => parseConfig({ DATABASE_URL: "libsql://db.example" }, "worker")).toThrow(/ADMIN_TOKEN/);
  });

  it("requires QStash credentials when the scheduler is qstash", () => {
    expect(() => parseConfig({ SCHEDULER: "qstash", QSTASH_TOKEN: "t" }, "node")).toThrow(/QSTASH_CURRENT_SIGNING_KEY/);
  });

  it("enables the LLM with a base URL alone (a local server needs no key)", () => {
    expect(parseConfig({ OPENAI_BASE_URL: "http://127.0.0.1:11434/v1" }, "node").llm).toMatchObject({
      baseUrl: "http://127.0.0.1:11434/v1",
    });
  });
});
