/**
 * The self-describing API (issue #36 item 3): GET /openapi.json is an OpenAPI 3.1 document of
 * every /api route the app registers (checked structurally: version, info, operations with
 * responses, path parameters, $refs that resolve, schemas in draft 2020-12 that a JSON Schema
 * validator accepts), with each route's role as the guards on it decide; and every listed route
 * answers as it says: called on the app with the admin token and a minimal body built from its
 * schema, it is served (no route-level 404 or 405 unless documented), answers a documented
 * status, and refuses a body missing its required fields with a 400 `{error}`. GET /openapi is the
 * same list as a page with nothing loaded from elsewhere.
 */
import { Validator } from "@cfworker/json-schema";
import { Validator as OpenApiValidator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import { instanceActionBody } from "../../functions/fleet/fleet.schemas.ts";
import { API_SUMMARIES } from "../../jobs/openapi/api-summaries.ts";
import { jsonSchemaOf, type JsonSchema, type OpenApiDocument } from "../../jobs/openapi/openapi-document.ts";
import { createTestDeps, TEST_ADMIN_TOKEN } from "../support/test-deps.ts";

const bare = () =>
  buildApp(() => {
    throw new Error("no request reaches the database here");
  });

async function served(): Promise<{ doc: OpenApiDocument; app: ReturnType<typeof buildApp> }> {
  const deps = await createTestDeps();
  const app = buildApp(() => deps);
  const res = await app.request("/openapi.json");
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  return { doc: (await res.json()) as OpenApiDocument, app };
}

const operations = (doc: OpenApiDocument) =>
  Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ path, method: method.toUpperCase(), op })),
  );

/** Values for the path parameters that exist in a fresh test database (the default agent, its simulated instance sim-1). */
const concrete = (path: string) =>
  path
    .replace("{agent}", "default")
    .replace("{key}", "some-fact")
    .replace("{runId}", "1")
    .replace("instances/{id}", "instances/sim-1")
    .replace("{id}", "999");

/** The admin token; JSON in, and JSON or an event stream out (the MCP endpoint asks a client to accept both). */
const HEADERS = {
  Authorization: `Bearer ${TEST_ADMIN_TOKEN}`,
  "Content-Type": "application/json",
  Accept: "application/json, text/event-stream",
};

const STRING_CANDIDATES = ["sample-1", "U0SAMPLE1", "a"];

/** The least instance a schema accepts: required fields only, first enum value, minimum numbers. */
function sample(schema: JsonSchema): unknown {
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.anyOf)) return sample(schema.anyOf[0] as JsonSchema);
  switch (schema.type) {
    case "object": {
      const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
      const names = (schema.required ?? []) as string[];
      // minProperties (a refinement "give at least one of") is met with the first property.
      if (typeof schema.minProperties === "number" && names.length < schema.minProperties)
        names.push(...Object.keys(properties).slice(0, schema.minProperties));
      return Object.fromEntries(names.map((name) => [name, sample(properties[name]!)]));
    }
    case "array":
      return [];
    case "integer":
    case "number":
      return typeof schema.minimum === "number" ? schema.minimum : 1;
    case "boolean":
      return false;
    case "string": {
      const pattern = typeof schema.pattern === "string" ? new RegExp(schema.pattern) : null;
      const min = typeof schema.minLength === "number" ? schema.minLength : 1;
      return STRING_CANDIDATES.map((s) => s.padEnd(min, "x")).find((s) => !pattern || pattern.test(s)) ?? "sample-1";
    }
    default:
      return "sample-1";
  }
}

describe("GET /openapi.json", () => {
  it("validates against the OpenAPI 3.1 schema (@seriousme/openapi-schema-validator, the spec's own JSON Schema)", async () => {
    const { doc } = await served();
    const validator = new OpenApiValidator();
    const result = await validator.validate(structuredClone(doc) as unknown as Parameters<OpenApiValidator["validate"]>[0]);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
  });

  it("is an OpenAPI 3.1 document whose operations, parameters, $refs and schemas hold together", async () => {
    const { doc } = await served();
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.info.title).toBeTruthy();
    expect(doc.info.version).toBeTruthy();
    expect(doc.jsonSchemaDialect).toBe("https://json-schema.org/draft/2020-12/schema");
    const ids = new Set<string>();
    const refs: string[] = [];
    const walk = (node: unknown) => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node && typeof node === "object") for (const [k, v] of Object.entries(node)) k === "$ref" ? refs.push(v as string) : walk(v);
    };
    walk(doc);
    for (const { path, method, op } of operations(doc)) {
      const where = `${method} ${path}`;
      expect(path, where).toMatch(/^\/api\/[\w/{}-]+$/);
      expect(["GET", "POST", "PATCH", "DELETE", "PUT"]).toContain(method);
      expect(ids.has(op.operationId), where).toBe(false);
      ids.add(op.operationId);
      expect(op.summary, where).toBeTruthy();
      expect(["viewer", "operator", "admin"]).toContain(op["x-fleetwarden-role"]);
      expect(op.security, where).toEqual([{ bearer: [] }]);
      expect(Object.keys(op.responses).length, where).toBeGreaterThan(0);
      for (const [status, response] of Object.entries(op.responses)) {
        expect(status, where).toMatch(/^([1-5](\d\d|XX)|default)$/);
        expect(response.description, where).toBeTruthy();
      }
      // Every {param} of the path is a required path parameter, and no other path parameter is declared.
      const inPath = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      const declared = (op.parameters ?? []).filter((p) => p.in === "path");
      expect(
        declared.map((p) => p.name),
        where,
      ).toEqual(inPath);
      expect(
        declared.every((p) => p.required),
        where,
      ).toBe(true);
      const schemas = [
        ...(op.parameters ?? []).map((p) => p.schema),
        ...(op.requestBody ? [op.requestBody.content["application/json"].schema] : []),
      ];
      for (const schema of schemas) expect(() => new Validator(schema as never, "2020-12").validate(null), where).not.toThrow();
    }
    expect(Object.keys(doc.components.securitySchemes)).toEqual(["bearer"]);
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) {
      expect(ref).toMatch(/^#\//);
      const target = ref
        .slice(2)
        .split("/")
        .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], doc);
      expect(target, ref).toBeTypeOf("object");
    }
  });

  it("lists every /api route the app registers, each with its summary, and nothing else", async () => {
    const { doc } = await served();
    const registered = new Set(
      bare()
        .routes.filter((r) => r.method !== "ALL" && r.path.startsWith("/api/"))
        .map((r) => `${r.method} ${r.path.replace(/:(\w+)/g, "{$1}")}`),
    );
    expect(registered.size).toBeGreaterThan(40);
    expect(new Set(operations(doc).map(({ method, path }) => `${method} ${path}`))).toEqual(registered);
    expect(new Set(Object.keys(API_SUMMARIES).map((k) => k.replace(/:(\w+)/g, "{$1}")))).toEqual(registered);
  });

  it("names each route's role as its guards decide (method default, requireRole on the route or its prefix, MCP at viewer)", async () => {
    const { doc } = await served();
    const role = (method: string, path: string) => doc.paths[path]?.[method]?.["x-fleetwarden-role"];
    expect(role("get", "/api/agents/{agent}/runs")).toBe("viewer");
    expect(role("post", "/api/agents/{agent}/trigger")).toBe("operator");
    expect(role("post", "/api/agents")).toBe("admin");
    expect(role("patch", "/api/agents/{agent}")).toBe("admin");
    expect(role("get", "/api/operators")).toBe("admin");
    expect(role("delete", "/api/operators/{id}")).toBe("admin");
    expect(role("get", "/api/agents/{agent}/instances/{id}/reporter")).toBe("operator");
    expect(role("post", "/api/agents/{agent}/mcp")).toBe("viewer");
  });

  it("shows the very schema the route validates with, and its query parameters", async () => {
    const { doc } = await served();
    const actions = doc.paths["/api/agents/{agent}/instances/{id}/actions"]!.post!;
    expect(actions.requestBody!.content["application/json"].schema).toEqual(jsonSchemaOf(instanceActionBody));
    const runs = doc.paths["/api/agents/{agent}/runs"]!.get!;
    expect(runs.parameters!.find((p) => p.name === "limit")).toMatchObject({ in: "query", required: false });
    // A body the handler parses itself, optional (an empty one resets the session only), is described too.
    const reset = doc.paths["/api/agents/{agent}/session/reset"]!.post!;
    expect(reset.requestBody).toMatchObject({
      required: false,
      content: { "application/json": { schema: { properties: { clearMemory: { type: "boolean" } } } } },
    });
    const instances = doc.paths["/api/agents/{agent}/instances"]!.get!;
    expect(instances.parameters!.find((p) => p.name === "agent")!.schema).toMatchObject({ type: "string", pattern: expect.any(String) });
  });
});

describe("every listed route answers as it says", () => {
  it("each operation, called with the admin token and a minimal body from its schema, is served and answers a documented status", async () => {
    const { doc } = await served();
    const failures: string[] = [];
    for (const { path, method, op } of operations(doc)) {
      const deps = await createTestDeps();
      const app = buildApp(() => deps);
      const url = concrete(path);
      const schema = op.requestBody?.content["application/json"].schema;
      const body = schema ? sample(schema) : undefined;
      if (schema && !new Validator(schema as never, "2020-12").validate(body).valid)
        failures.push(`${method} ${path}: sample body does not fit its own schema`);
      const res = await app.request(url, {
        method,
        headers: HEADERS,
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const text = await res.text();
      const where = `${method} ${path} → ${res.status} ${text.slice(0, 160)}`;
      if (text.includes(`not found: ${method} ${url}`)) failures.push(`${where}: route not served`);
      const documented = Object.keys(op.responses).some(
        (s) => s === String(res.status) || (s.endsWith("XX") && s[0] === String(res.status)[0]),
      );
      if (!documented) failures.push(`${where}: status not documented`);
      if (res.status === 405 && !op.responses["405"]) failures.push(`${where}: 405`);
      if (schema && res.status === 400) failures.push(`${where}: a body fitting the schema was refused`);
      if (res.status >= 400 && !(JSON.parse(text) as { error?: unknown }).error) failures.push(`${where}: error without {error}`);
    }
    expect(failures).toEqual([]);
  }, 120_000);

  it("each body route refuses a body missing its required fields, or not JSON, with a 400 {error}", async () => {
    const { doc } = await served();
    const withBody = operations(doc).filter(({ op }) => op.requestBody);
    expect(withBody.length).toBeGreaterThan(8);
    for (const { path, method, op } of withBody) {
      const deps = await createTestDeps();
      const app = buildApp(() => deps);
      const headers = HEADERS;
      const required = (op.requestBody!.content["application/json"].schema.required ?? []) as string[];
      const bodies = required.length ? ["{}", "not json"] : ["not json"];
      for (const body of bodies) {
        const res = await app.request(concrete(path), { method, headers, body });
        expect(res.status, `${method} ${path} with ${body}`).toBe(400);
        expect((await res.json()).error, `${method} ${path} with ${body}`).toBeTruthy();
      }
    }
  }, 120_000);
});

describe("GET /openapi", () => {
  it("is a page listing every operation, with nothing loaded from elsewhere", async () => {
    const { doc, app } = await served();
    const res = await app.request("/openapi");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    const page = await res.text();
    for (const { path } of operations(doc)) expect(page).toContain(`<code>${path}</code>`);
    expect(page).toContain("POST /api/agents/{agent}/trigger".split(" ")[1]);
    expect(page).not.toMatch(/<script|src=|href="(https?:)?\/\//);
  });
});
