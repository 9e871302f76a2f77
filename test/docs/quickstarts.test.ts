/**
 * The quick starts (issue #38, item 1) stay one page each and stay true: a page names only the
 * variables its provider needs (a short list, not the reference's 80-odd), each of them a real row
 * of the settings table; every route a page names is one the app serves; the README links every
 * page; and the Slack app manifest the pages paste sends its button clicks to the app's own Slack
 * route. A renamed setting or route, or a page that grows into a reference, fails here.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import { ENV_ROWS } from "../../runtime/settings/table.ts";

const ROOT = join(import.meta.dirname, "../..");
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");

const SLACK = ["SLACK_WEBHOOK_URL", "SLACK_SIGNING_SECRET", "PUBLIC_URL"];
const FIRST = ["AGENT_MODE", "IDLE_STOP_AFTER_S", "SPEND_LIMIT_PER_DAY_USD", "DIGEST_HOUR_UTC", "OPENAI_API_KEY", "WEBHOOK_SECRET"];
/** What each page may name: its key, Slack's three, and what to switch on first. */
const PAGES: Record<string, string[]> = {
  "docs/quickstart-vast.md": ["VAST_API_KEY", "VAST_WEBHOOK_SECRET", ...SLACK, ...FIRST],
  "docs/quickstart-runpod.md": ["RUNPOD_API_KEY", ...SLACK, ...FIRST],
  "docs/quickstart-lambda.md": ["LAMBDA_API_KEY", ...SLACK, ...FIRST],
  "docs/quickstart-simulator.md": ["SIMULATOR_INSTANCES", "SIMULATOR_FAILURE_RATE", ...SLACK, ...FIRST],
};

/**
 * Names written as settings are: upper case with at least one underscore. `FLEETWARDEN_*` are the
 * command line's and the instance reporter's own variables (set on the client), not settings.
 */
const variablesOf = (page: string) =>
  new Set((page.match(/\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g) ?? []).filter((name) => !name.startsWith("FLEETWARDEN_")));

/** Paths the page sends requests to: `METHOD /path` and URLs on the host (localhost:8787, $FW, <your host>). */
function routesOf(page: string): { method: string | null; path: string }[] {
  const found: { method: string | null; path: string }[] = [];
  for (const [, method, path] of page.matchAll(/\b(GET|POST|PUT|PATCH|DELETE) (\/[^\s`)]*)/g)) found.push({ method: method!, path: path! });
  for (const [, path] of page.matchAll(/(?:localhost:8787|\$FW|<your host>)(\/[^\s`"')]*)/g)) found.push({ method: null, path: path! });
  return found.map((r) => ({ ...r, path: r.path.replace(/[?#].*$/, "") })).filter((r) => r.path !== "/");
}

function appRoutes() {
  const app = buildApp(() => {
    throw new Error("no request is made");
  });
  return app.routes
    .filter((r) => r.method !== "ALL")
    .map((r) => ({ method: r.method, path: r.path, pattern: new RegExp(`^${r.path.replace(/:[^/]+/g, "[^/]+")}$`) }));
}

/**
 * Enough of YAML for the manifest: nested mappings by indentation, `- item` lists of scalars,
 * quoted or plain scalars, comments. Anything else is an error, so the manifest stays this simple.
 */
export function parseSimpleYaml(text: string): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  const stack: { indent: number; node: Record<string, unknown> | unknown[] }[] = [{ indent: -1, node: root }];
  let lastKey: { parent: Record<string, unknown>; key: string; indent: number } | null = null;
  for (const raw of text.split("\n")) {
    const line = raw.replace(/\s+#.*$/, "").replace(/^#.*$/, "");
    if (!line.trim()) continue;
    const indent = line.length - line.trimStart().length;
    const body = line.trim();
    while (stack.length > 1 && stack.at(-1)!.indent >= indent) stack.pop();
    const scalar = (v: string) => v.replace(/^"(.*)"$/, "$1").replace(/^'(.*)'$/, "$1");
    if (body.startsWith("- ")) {
      let top = stack.at(-1)!;
      if (!Array.isArray(top.node)) {
        if (!lastKey || lastKey.indent >= indent) throw new Error(`a list without its key: ${raw}`);
        const list: unknown[] = [];
        lastKey.parent[lastKey.key] = list;
        top = { indent: indent - 1, node: list };
        stack.push(top);
      }
      (top.node as unknown[]).push(scalar(body.slice(2).trim()));
      continue;
    }
    const m = /^([\w.-]+):(?:\s+(.*))?$/.exec(body);
    if (!m) throw new Error(`not simple YAML: ${raw}`);
    const parent = stack.at(-1)!.node;
    if (Array.isArray(parent)) throw new Error(`a mapping inside a list: ${raw}`);
    if (m[2] === undefined || m[2] === "") {
      const child: Record<string, unknown> = {};
      parent[m[1]!] = child;
      stack.push({ indent, node: child });
      lastKey = { parent, key: m[1]!, indent };
    } else {
      const v = scalar(m[2]);
      parent[m[1]!] = v === "true" ? true : v === "false" ? false : /^\d+$/.test(v) ? Number(v) : v;
    }
  }
  return root;
}

describe("the quick starts", () => {
  const settings = new Set(ENV_ROWS.map((row) => row.name));
  const routes = appRoutes();

  for (const [path, allowed] of Object.entries(PAGES)) {
    describe(path, () => {
      const page = read(path);

      it("names only the variables it needs, each a real setting", () => {
        const named = [...variablesOf(page)];
        expect(named.filter((name) => !settings.has(name))).toEqual([]);
        expect(named.filter((name) => !allowed.includes(name))).toEqual([]);
        expect(named.length).toBeLessThanOrEqual(12);
        // The page's own key is named, and so is each thing to switch on first.
        expect(named).toContain(allowed[0]);
        for (const first of ["AGENT_MODE", "SPEND_LIMIT_PER_DAY_USD", "DIGEST_HOUR_UTC", ...SLACK]) expect(named).toContain(first);
      });

      it("names only routes the app serves", () => {
        const named = routesOf(page);
        expect(named.length).toBeGreaterThan(3);
        const unknown = named.filter((r) => !routes.some((a) => a.pattern.test(r.path) && (r.method === null || a.method === r.method)));
        expect(unknown).toEqual([]);
      });

      it("covers the five things, and is linked from the README", () => {
        for (const heading of [
          "## 1. The one key",
          "## 2. How instances report",
          "## 3. Slack in five steps",
          "## 4. What to switch on first",
          "## 5. What it costs to run",
        ]) {
          expect(page).toContain(heading);
        }
        expect(page).toContain("(slack-app-manifest.yaml)");
        expect(page).toContain("/webhooks/default/instances");
        expect(page).toMatch(/\$5 a month/);
        expect(read("README.md")).toContain(`(${path})`);
      });
    });
  }
});

describe("docs/slack-app-manifest.yaml", () => {
  const manifest = parseSimpleYaml(read("docs/slack-app-manifest.yaml")) as {
    display_information: { name: string };
    features: { bot_user: { display_name: string } };
    oauth_config: { scopes: { bot: string[] } };
    settings: { interactivity: { is_enabled: boolean; request_url: string } };
  };

  it("is a Slack app manifest with the webhook scope and interactivity on (clicks answer through response_url: no chat:write)", () => {
    expect(manifest.display_information.name).toBe("fleetwarden");
    expect(manifest.features.bot_user.display_name).toBe("fleetwarden");
    expect(manifest.oauth_config.scopes.bot).toEqual(["incoming-webhook"]);
    expect(manifest.settings.interactivity.is_enabled).toBe(true);
  });

  it("sends button clicks to the app's Slack route", () => {
    const slack = appRoutes().filter((r) => r.method === "POST" && r.path.includes("slack"));
    expect(slack.map((r) => r.path)).toEqual(["/integrations/slack/interactions"]);
    const url = new URL(manifest.settings.interactivity.request_url.replace("<your host>", "fw.example"));
    expect(url.protocol).toBe("https:");
    expect(url.pathname).toBe(slack[0]!.path);
  });
});
