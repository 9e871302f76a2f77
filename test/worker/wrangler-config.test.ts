/**
 * wrangler.toml as wrangler itself reads it (`unstable_readConfig`): values set in the Cloudflare
 * dashboard survive `wrangler deploy` (`keep_vars`), and the per-deployment values docs/operations.md
 * says to set there are not also under [vars], where each deploy would overwrite them.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { unstable_readConfig } from "wrangler";
import { ROOT } from "./worker-boot.ts";

const config = unstable_readConfig({ config: join(ROOT, "wrangler.toml") });

describe("wrangler.toml", () => {
  it("keeps the variables set in the dashboard when deploying", () => {
    expect(config.keep_vars).toBe(true);
  });

  it("leaves the per-deployment values to the dashboard or secrets", () => {
    for (const name of ["DATABASE_URL", "PUBLIC_URL", "QSTASH_FLOW_PREFIX", "OPENAI_BASE_URL", "ADMIN_TOKEN", "QSTASH_TOKEN"]) {
      expect(config.vars, name).not.toHaveProperty(name);
    }
    expect(config.vars).toMatchObject({ SCHEDULER: "qstash" });
  });
});
