/**
 * A strict local Lambda Cloud stand-in for contract tests: a real node:http server on port 0 with
 * a scriptable fleet of instances, answering the calls dstack's and SkyPilot's clients make.
 *
 * Written from dstackai/dstack at commit 511c318c8a7672fb2a925041bfc2d7301a26272e
 * (src/dstack/_internal/core/backends/lambdalabs/api_client.py, compute.py) and
 * skypilot-org/skypilot at 0c05908979a0496dcecac09a44ff20904fc9faa1
 * (sky/provision/lambda_cloud/lambda_utils.py), not from fleetwarden's client:
 * - every call carries `Authorization: Bearer <key>`; a bad key is a 401 (dstack
 *   `validate_api_key` reads 401/403 as invalid); errors are `{"error": {"code", "message"}}`.
 * - `GET /instances` answers `{data: [instance]}`; `GET /instances/{id}` `{data: instance}`.
 * - `POST /instance-operations/launch` takes region_name, instance_type_name, ssh_key_names,
 *   file_system_names, quantity and name (at most 60 characters: dstack MAX_INSTANCE_NAME_LEN), and
 *   answers `{data: {instance_ids}}`; the instance keeps its key and file system names, as GET
 *   /instances shows them (Lambda's Cloud API docs, cbrownstein-lambda/lambda-docs-mkdocs 1ecdf8a4,
 *   docs/public-cloud/cloud-api.md); a type with no
 *   capacity in the region is `instance-operations/launch/insufficient-capacity` (SkyPilot's
 *   words). Launches are limited to about one every ten seconds (SkyPilot `create_instances`,
 *   citing Lambda's docs) and answered 429 beyond that: here `launchLimit` per `launchWindowMs`.
 * - `POST /instance-operations/terminate` takes `instance_ids` and answers
 *   `{data: {terminated_instances}}` (SkyPilot `remove_instances`); restart answers
 *   `{data: {restarted_instances}}`.
 * - `GET /instance-types` answers `{data: {name: {instance_type: {name, description,
 *   price_cents_per_hour, specs}, regions_with_capacity_available: [{name, description}]}}}`;
 *   `GET /ssh-keys` answers `{data: [{name, public_key}]}`.
 *
 * Strict: an unknown body field, a missing required one or a wrong type is a 400
 * `global/invalid-parameters`; an unknown instance a 404 `global/object-does-not-exist`; an unknown
 * path a 404, a wrong method a 405. A new instance is `booting`, a terminated one `terminating`;
 * tests script later states through `instances`. Faults via `intercept`; every request recorded.
 */
import { createServer } from "node:http";
import { listenLoopback, readJsonBody } from "../support/loopback-server.ts";

export type LambdaRecord = Record<string, unknown> & { id: string; status: string };

export interface LambdaSeen {
  method: string;
  path: string;
  authorization: string | undefined;
  body: unknown;
}

export interface LambdaFakeOptions {
  apiKey?: string;
  instances?: LambdaRecord[];
  /** Instance types by name: `{instance_type, regions_with_capacity_available}`. */
  instanceTypes?: Record<
    string,
    { instance_type: Record<string, unknown>; regions_with_capacity_available: { name: string; description?: string }[] }
  >;
  sshKeys?: string[];
  /** The account's file systems and their regions: a launch naming one elsewhere is refused. */
  fileSystems?: { name: string; region: string }[];
  /** Launches accepted per window (default 1 per 10 s, SkyPilot's figure). */
  launchLimit?: number;
  launchWindowMs?: number;
  now?: () => number;
  intercept?: (
    req: LambdaSeen,
    index: number,
  ) => { status?: number; body?: unknown; raw?: string; headers?: Record<string, string> } | undefined;
}

export interface LambdaServer {
  url: string;
  requests: LambdaSeen[];
  instances: Map<string, LambdaRecord>;
  close(): Promise<void>;
}

type Reply = { status: number; body: unknown };
const err = (status: number, code: string, message: string): Reply => ({ status, body: { error: { code, message } } });
const LAUNCH_FIELDS = ["region_name", "instance_type_name", "ssh_key_names", "file_system_names", "quantity", "name"];

function badFields(body: unknown, allowed: string[], required: string[]): Reply | null {
  if (typeof body !== "object" || body === null || Array.isArray(body))
    return err(400, "global/invalid-parameters", "Request body must be a JSON object");
  const record = body as Record<string, unknown>;
  const unknown = Object.keys(record).find((k) => !allowed.includes(k));
  if (unknown) return err(400, "global/invalid-parameters", `Unknown field: ${unknown}`);
  const missing = required.find((k) => record[k] === undefined || record[k] === null);
  return missing ? err(400, "global/invalid-parameters", `Missing required field: ${missing}`) : null;
}

class LambdaFake {
  readonly instances: Map<string, LambdaRecord>;
  private launches: number[] = [];
  private nextId = 1;
  constructor(private readonly options: LambdaFakeOptions) {
    this.instances = new Map((options.instances ?? []).map((i) => [i.id, { ...i }]));
  }

  handle(method: string, path: string, body: unknown): Reply {
    const show = /^\/instances\/([^/]+)$/.exec(path);
    const routes: Record<string, () => Reply> = {
      "GET /instances": () => ({ status: 200, body: { data: [...this.instances.values()] } }),
      "GET /instance-types": () => ({ status: 200, body: { data: this.options.instanceTypes ?? {} } }),
      "GET /ssh-keys": () => ({
        status: 200,
        body: { data: (this.options.sshKeys ?? ["ops"]).map((name) => ({ id: name, name, public_key: "ssh-ed25519 AAAA" })) },
      }),
      "POST /instance-operations/launch": () => this.launch(body),
      "POST /instance-operations/terminate": () => this.operate(body, "terminated_instances", (i) => (i.status = "terminating")),
      "POST /instance-operations/restart": () => this.operate(body, "restarted_instances", (i) => (i.status = "booting")),
    };
    if (show) {
      if (method !== "GET") return err(405, "global/method-not-allowed", "Method not allowed");
      const found = this.instances.get(show[1]!);
      return found
        ? { status: 200, body: { data: found } }
        : err(404, "global/object-does-not-exist", "Specified instance does not exist.");
    }
    const route = routes[`${method} ${path}`];
    if (route) return route();
    if (Object.keys(routes).some((r) => r.endsWith(` ${path}`))) return err(405, "global/method-not-allowed", "Method not allowed");
    return err(404, "global/not-found", `No such endpoint: ${path}`);
  }

  private launch(body: unknown): Reply {
    const bad = badFields(body, LAUNCH_FIELDS, ["region_name", "instance_type_name", "ssh_key_names"]);
    if (bad) return bad;
    const b = body as Record<string, unknown>;
    if (!Array.isArray(b.ssh_key_names) || b.ssh_key_names.length !== 1)
      return err(400, "global/invalid-parameters", "ssh_key_names must name exactly one key");
    if (!(this.options.sshKeys ?? ["ops"]).includes(String(b.ssh_key_names[0])))
      return err(400, "global/invalid-parameters", `Unknown SSH key: ${String(b.ssh_key_names[0])}`);
    if (typeof b.name === "string" && b.name.length > 60)
      return err(400, "global/invalid-parameters", "name must be at most 60 characters");
    if (b.file_system_names !== undefined && !Array.isArray(b.file_system_names))
      return err(400, "global/invalid-parameters", "file_system_names must be a list");
    for (const name of (b.file_system_names as unknown[] | undefined) ?? []) {
      const fs = this.options.fileSystems?.find((f) => f.name === name);
      if (!fs) return err(404, "global/object-does-not-exist", `Unknown file system: ${String(name)}`);
      // Lambda's own error code (instance-operations/launch/file-system-in-wrong-region).
      if (fs.region !== b.region_name)
        return err(400, "instance-operations/launch/file-system-in-wrong-region", "File system is in a different region.");
    }
    const now = (this.options.now ?? Date.now)();
    this.launches = this.launches.filter((t) => now - t < (this.options.launchWindowMs ?? 10_000));
    if (this.launches.length >= (this.options.launchLimit ?? 1)) return err(429, "global/too-many-requests", "Too many launch requests");
    const type = this.options.instanceTypes?.[String(b.instance_type_name)];
    if (!type) return err(404, "global/object-does-not-exist", `Unknown instance type: ${String(b.instance_type_name)}`);
    if (!type.regions_with_capacity_available.some((r) => r.name === b.region_name)) {
      return err(400, "instance-operations/launch/insufficient-capacity", "Not enough capacity to fulfill launch request.");
    }
    this.launches.push(now);
    const quantity = typeof b.quantity === "number" ? b.quantity : 1;
    const ids = Array.from({ length: quantity }, () => (this.nextId++).toString(16).padStart(32, "0"));
    for (const id of ids) {
      this.instances.set(id, {
        ...lambdaInstanceRow(id),
        status: "booting",
        ip: null,
        name: b.name ?? null,
        region: { name: b.region_name, description: "" },
        instance_type: type.instance_type,
        ssh_key_names: b.ssh_key_names,
        file_system_names: b.file_system_names ?? [],
      });
    }
    return { status: 200, body: { data: { instance_ids: ids } } };
  }

  private operate(body: unknown, answerKey: string, change: (i: LambdaRecord) => void): Reply {
    const bad = badFields(body, ["instance_ids"], ["instance_ids"]);
    if (bad) return bad;
    const ids = (body as { instance_ids: unknown }).instance_ids;
    if (!Array.isArray(ids) || !ids.length) return err(400, "global/invalid-parameters", "instance_ids must be a non-empty list");
    const found = ids.map((id) => this.instances.get(String(id)));
    if (found.some((i) => !i || i.status === "terminated"))
      return err(404, "global/object-does-not-exist", "Specified instance does not exist.");
    found.forEach((i) => change(i!));
    return { status: 200, body: { data: { [answerKey]: found } } };
  }
}

export async function startLambdaServer(options: LambdaFakeOptions = {}): Promise<LambdaServer> {
  const key = options.apiKey ?? "lambda-test-key";
  const fake = new LambdaFake(options);
  const requests: LambdaSeen[] = [];
  const server = createServer(async (req, res) => {
    const { json: body, invalid } = await readJsonBody(req);
    const path = new URL(req.url ?? "/", "http://x").pathname.replace(/^\/api\/v1/, "");
    const seen: LambdaSeen = { method: req.method ?? "GET", path, authorization: req.headers.authorization, body };
    requests.push(seen);
    const injected = options.intercept?.(seen, requests.length - 1);
    const reply: Reply & { raw?: string; headers?: Record<string, string> } = injected
      ? {
          status: injected.status ?? 200,
          body: injected.body,
          ...(injected.raw !== undefined ? { raw: injected.raw } : {}),
          ...(injected.headers ? { headers: injected.headers } : {}),
        }
      : seen.authorization !== `Bearer ${key}`
        ? err(401, "global/invalid-api-key", "API key was invalid, expired, or deleted.")
        : invalid
          ? err(400, "global/invalid-parameters", "Request body is not valid JSON")
          : fake.handle(seen.method, path, body);
    res.writeHead(reply.status, { "Content-Type": "application/json", ...reply.headers });
    res.end(reply.raw ?? JSON.stringify(reply.body));
  });
  const { origin, close } = await listenLoopback(server);
  return { url: `${origin}/api/v1`, requests, instances: fake.instances, close };
}

export const A100_TYPE = {
  name: "gpu_1x_a100_sxm4",
  description: "1x A100 (40 GB SXM4)",
  price_cents_per_hour: 129,
  specs: { vcpus: 30, memory_gib: 200, storage_gib: 512, gpus: 1 },
};

/** An active instance as Lambda answers it. */
export function lambdaInstanceRow(id: string, overrides: Record<string, unknown> = {}): LambdaRecord {
  return {
    id,
    name: `job-${id.slice(-4)}`,
    ip: "198.51.100.7",
    status: "active",
    ssh_key_names: ["ops"],
    file_system_names: [],
    region: { name: "us-east-1", description: "Virginia, USA" },
    instance_type: A100_TYPE,
    hostname: "198-51-100-7.cloud.lambdalabs.com",
    jupyter_token: "t",
    jupyter_url: "https://jupyter.example",
    is_reserved: false,
    ...overrides,
  };
}
