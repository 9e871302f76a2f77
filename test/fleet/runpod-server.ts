/**
 * A strict local RunPod stand-in for contract tests: a real node:http server on port 0 answering
 * RunPod's REST API under `/v1` (runpod-rest-server.ts, written from RunPod's REST reference) and
 * its GraphQL endpoint at `/graphql`, over one scriptable fleet of pods.
 *
 * Written from runpod/runpod-python at commit 07fc6e2b02b6a97a0e94fbdcf53c66949c1a6164, not from
 * fleetwarden's client:
 * - runpod/api/graphql.py `run_graphql_query`: POST `/graphql`, JSON `{"query": …}`,
 *   `Authorization: Bearer <key>`; a 401 is a bad key; `errors` in the answer is a failure.
 * - runpod/api/queries/pods.py: `myself { pods { … } }` and `pod(input: {podId})`, the Pod fields
 *   listed there (plus runtime `uptimeInSeconds` and `gpus { id gpuUtilPercent memoryUtilPercent }`,
 *   and `container`, from https://docs.runpod.io/sdks/graphql/manage-pods.md).
 * - runpod/api/mutations/pods.py: `podStop(input: {podId})`, `podResume(input: {podId, gpuCount})`,
 *   `podTerminate(input: {podId})` (a scalar answer), `podFindAndDeployOnDemand(input: …)` with the
 *   input fields `generate_pod_deployment_mutation` can send (name, imageName and cloudType always;
 *   gpuTypeId for a GPU pod; at c7622afa also `ports` (spaces removed), `volumeInGb` and
 *   `volumeMountPath`, which the deployed pod keeps); runpod/api/queries/gpus.py: `gpuTypes` and `lowestPrice(input:
 *   {gpuCount})`.
 * - dstackai/dstack 511c318c, src/dstack/_internal/core/backends/runpod/api_client.py and
 *   compute.py: RunPod answers client errors with 200 and an `errors` array; terminating an unknown
 *   pod says "pod not found to terminate".
 *
 * Strict: a missing or wrong key is a 401; a query for a field the schema lacks is a 400 with
 * graphql-js's validation error (`Cannot query field "x" on type "Pod".`, code
 * GRAPHQL_VALIDATION_FAILED); an input with an unknown or missing required field is a 400
 * BAD_USER_INPUT; a mutation on an unknown pod is a 200 with `errors`. A terminated pod is gone
 * from the list. Faults are injected per request with `intercept`; every request is recorded.
 */
import { createServer } from "node:http";
import { listenLoopback, readJsonBody } from "../support/loopback-server.ts";
import { answerRest, type RestFailures } from "./runpod-rest-server.ts";
import { checkInput, GraphqlError, parseOperation, project, validate, type Field, type Schema } from "./graphql-lite.ts";

export type PodRecord = Record<string, unknown> & { id: string; desiredStatus: string };

export interface RunpodSeen {
  method: string;
  /** The path without its query ("/graphql", "/v1/pods/abc/stop"). */
  path: string;
  authorization: string | undefined;
  /** GraphQL `{query, variables}`, or a REST body (a create input). */
  body: ({ query?: string; variables?: Record<string, unknown> } & Record<string, unknown>) | undefined;
}

export interface RunpodFakeOptions {
  apiKey?: string;
  pods?: PodRecord[];
  gpuTypes?: Record<string, unknown>[];
  /** `myself { clientBalance }` in USD (default 100). */
  clientBalance?: number;
  /** Failures the REST side plays (no capacity on create, a start whose host GPUs are taken). */
  failures?: RestFailures;
  intercept?: (req: RunpodSeen, index: number) => { status?: number; body?: unknown; raw?: string } | undefined;
}

export interface RunpodServer {
  url: string;
  requests: RunpodSeen[];
  pods: Map<string, PodRecord>;
  close(): Promise<void>;
}

const SCHEMA: Schema = {
  Query: { myself: "User", pod: "Pod", gpuTypes: "GpuType" },
  Mutation: { podStop: "Pod", podResume: "Pod", podTerminate: null, podFindAndDeployOnDemand: "Pod" },
  // clientBalance: the account's credit balance in USD. Not in runpod-python; RunPod's own docs show
  // it on the user (`runpodctl user`: "clientBalance": 435.85 beside currentSpendPerHr and spendLimit,
  // https://docs.runpod.io/runpodctl/reference/runpodctl-user).
  User: { id: null, email: null, pods: "Pod", clientBalance: null },
  Pod: Object.fromEntries(
    [
      "id",
      "name",
      "desiredStatus",
      "costPerHr",
      "gpuCount",
      "imageName",
      "env",
      "dockerArgs",
      "dockerId",
      "machineId",
      "containerDiskInGb",
      "volumeInGb",
      "volumeMountPath",
      "memoryInGb",
      "vcpuCount",
      "podType",
      "port",
      "ports",
      "uptimeSeconds",
      "lastStatusChange",
    ]
      .map((f): [string, string | null] => [f, null])
      .concat([
        ["machine", "Machine"],
        ["runtime", "PodRuntime"],
      ]),
  ),
  Machine: { gpuDisplayName: null, podHostId: null },
  PodRuntime: { uptimeInSeconds: null, ports: "PodRuntimePorts", gpus: "PodRuntimeGpus", container: "PodRuntimeContainer" },
  PodRuntimePorts: { ip: null, isIpPublic: null, privatePort: null, publicPort: null, type: null },
  PodRuntimeGpus: { id: null, gpuUtilPercent: null, memoryUtilPercent: null },
  PodRuntimeContainer: { cpuPercent: null, memoryPercent: null },
  GpuType: {
    id: null,
    displayName: null,
    memoryInGb: null,
    maxGpuCount: null,
    manufacturer: null,
    secureCloud: null,
    communityCloud: null,
    securePrice: null,
    communityPrice: null,
    lowestPrice: "LowestPrice",
  },
  LowestPrice: { minimumBidPrice: null, uninterruptablePrice: null },
};

/** Every input field runpod-python's generate_pod_deployment_mutation can send. */
const DEPLOY_FIELDS = [
  "name",
  "imageName",
  "cloudType",
  "startSsh",
  "gpuTypeId",
  "supportPublicIp",
  "gpuCount",
  "volumeInGb",
  "minVcpuCount",
  "minMemoryInGb",
  "allowedCudaVersions",
  "dataCenterId",
  "dockerArgs",
  "countryCode",
  "containerDiskInGb",
  "ports",
  "volumeMountPath",
  "env",
  "templateId",
  "networkVolumeId",
  "minDownload",
  "minUpload",
  "instanceId",
];

class RunpodFake {
  readonly pods: Map<string, PodRecord>;
  private nextId = 1;
  constructor(private readonly options: RunpodFakeOptions) {
    this.pods = new Map((options.pods ?? []).map((p) => [p.id, { ...p }]));
  }

  /** A pod created over REST, stored as the GraphQL side shows it (runtime null: pulling its image). */
  restPod(fields: Record<string, unknown>): PodRecord {
    const id = `newpod${String(this.nextId++).padStart(6, "0")}`;
    return {
      ...runpodPodRow(id),
      desiredStatus: "RUNNING",
      runtime: null,
      name: fields.name ?? "",
      imageName: fields.imageName,
      gpuCount: fields.gpuCount ?? 1,
      env: Object.entries((fields.env as Record<string, string> | undefined) ?? {}).map(([k, v]) => `${k}=${v}`),
      dockerArgs: "",
      dockerStartCmd: fields.dockerStartCmd ?? [],
      containerDiskInGb: fields.containerDiskInGb ?? 50,
      volumeInGb: fields.volumeInGb ?? 0,
      volumeMountPath: fields.volumeMountPath ?? null,
      ports: Array.isArray(fields.ports) ? fields.ports.join(",") : null,
      gpuTypeIds: fields.gpuTypeIds,
      cloudType: fields.cloudType ?? "SECURE",
    };
  }

  /** `data` for one validated operation; GraphqlError for a refusal. */
  execute(query: string, variables: Record<string, unknown>): { status: number; data?: unknown; error?: GraphqlError } {
    let op;
    try {
      op = parseOperation(query);
      validate(SCHEMA, op.kind === "query" ? "Query" : "Mutation", op.fields);
    } catch (err) {
      return { status: 400, error: err as GraphqlError };
    }
    try {
      return {
        status: 200,
        data: Object.fromEntries(op.fields.map((f) => [f.name, project(this.resolve(op.kind, f, variables), f.selection)])),
      };
    } catch (err) {
      return { status: (err as GraphqlError).code === "BAD_USER_INPUT" ? 400 : 200, error: err as GraphqlError };
    }
  }

  private input(field: Field, variables: Record<string, unknown>, type: string, allowed: string[], required: string[]) {
    const name = field.args.input;
    if (!name)
      throw new GraphqlError(
        `Field "${field.name}" argument "input" of type "${type}!" is required, but it was not provided.`,
        "GRAPHQL_VALIDATION_FAILED",
      );
    return checkInput(name, type, variables[name], allowed, required);
  }

  private pod(id: unknown, doing: string): PodRecord {
    const pod = typeof id === "string" ? this.pods.get(id) : undefined;
    if (!pod) throw new GraphqlError(`pod not found to ${doing}`, "INTERNAL_SERVER_ERROR");
    return pod;
  }

  private resolve(kind: string, field: Field, variables: Record<string, unknown>): unknown {
    switch (`${kind}.${field.name}`) {
      case "query.myself":
        return { id: "user-1", email: "ops@example.com", pods: [...this.pods.values()], clientBalance: this.options.clientBalance ?? 100 };
      case "query.pod":
        return this.pods.get(String(this.input(field, variables, "PodFilter", ["podId"], ["podId"]).podId)) ?? null;
      case "query.gpuTypes": {
        const lowest = field.selection?.find((f) => f.name === "lowestPrice");
        if (lowest?.args.input)
          checkInput(
            lowest.args.input,
            "GpuLowestPriceInput",
            variables[lowest.args.input],
            ["gpuCount", "minDisk", "minMemoryInGb", "minVcpuCount", "secureCloud", "supportPublicIp"],
            ["gpuCount"],
          );
        return this.options.gpuTypes ?? [];
      }
      case "mutation.podStop": {
        const pod = this.pod(this.input(field, variables, "PodStopInput", ["podId"], ["podId"]).podId, "stop");
        return Object.assign(pod, { desiredStatus: "EXITED", runtime: null });
      }
      case "mutation.podResume": {
        const input = this.input(field, variables, "PodResumeInput", ["podId", "gpuCount", "bidPerGpu"], ["podId", "gpuCount"]);
        return Object.assign(this.pod(input.podId, "resume"), { desiredStatus: "RUNNING", runtime: null });
      }
      case "mutation.podTerminate": {
        const pod = this.pod(this.input(field, variables, "PodTerminateInput", ["podId"], ["podId"]).podId, "terminate");
        this.pods.delete(pod.id);
        return null;
      }
      case "mutation.podFindAndDeployOnDemand": {
        const input = this.input(field, variables, "PodFindAndDeployOnDemandInput", DEPLOY_FIELDS, [
          "name",
          "imageName",
          "cloudType",
          "gpuTypeId",
        ]);
        // GraphQL's own type check: ports and volumeMountPath are String, volumeInGb an Int.
        for (const [key, type] of [
          ["ports", "string"],
          ["volumeMountPath", "string"],
          ["volumeInGb", "number"],
        ] as const)
          if (input[key] !== undefined && input[key] !== null && typeof input[key] !== type)
            throw new GraphqlError(`Variable "$input" got invalid value; Field "${key}" has the wrong type.`, "BAD_USER_INPUT");
        const id = `newpod${String(this.nextId++).padStart(6, "0")}`;
        const env = Array.isArray(input.env) ? (input.env as { key: string; value: string }[]).map((e) => `${e.key}=${e.value}`) : [];
        const pod: PodRecord = {
          ...runpodPodRow(id),
          desiredStatus: "RUNNING",
          runtime: null,
          name: input.name,
          imageName: input.imageName,
          gpuCount: input.gpuCount ?? 1,
          env,
          dockerArgs: input.dockerArgs ?? "",
          containerDiskInGb: input.containerDiskInGb ?? 20,
          // What the deploy asked for, as RunPod records it (no volume and no ports when not sent).
          volumeInGb: input.volumeInGb ?? 0,
          volumeMountPath: input.volumeMountPath ?? null,
          ports: input.ports ?? null,
        };
        this.pods.set(id, pod);
        return pod;
      }
      default:
        throw new GraphqlError(`Cannot query field "${field.name}".`, "GRAPHQL_VALIDATION_FAILED");
    }
  }
}

export async function startRunpodServer(options: RunpodFakeOptions = {}): Promise<RunpodServer> {
  const key = options.apiKey ?? "runpod-test-key";
  const fake = new RunpodFake(options);
  const requests: RunpodSeen[] = [];
  const server = createServer(async (req, res) => {
    const body = (await readJsonBody(req)).json as RunpodSeen["body"];
    const path = new URL(req.url ?? "/", "http://x").pathname;
    const seen: RunpodSeen = { method: req.method ?? "GET", path, authorization: req.headers.authorization, body };
    requests.push(seen);
    const send = (status: number, json: unknown, raw?: string) => {
      res.writeHead(status, { "Content-Type": "application/json" });
      res.end(raw ?? JSON.stringify(json));
    };
    const injected = options.intercept?.(seen, requests.length - 1);
    if (injected) return send(injected.status ?? 200, injected.body, injected.raw);
    if (path.startsWith("/v1/")) {
      if (seen.authorization !== `Bearer ${key}`) return send(401, { error: "Unauthorized", status: 401 });
      const answer = answerRest(fake.pods, seen.method, path.slice(3), body, options.failures ?? {}, (fields) => fake.restPod(fields));
      return answer.body === undefined ? (res.writeHead(answer.status), res.end()) : send(answer.status, answer.body);
    }
    if (req.method !== "POST" || path !== "/graphql") return send(404, { errors: [{ message: "Not Found" }] });
    if (seen.authorization !== `Bearer ${key}`) return send(401, { errors: [{ message: "Unauthorized" }] });
    if (!body || typeof body.query !== "string")
      return send(400, {
        errors: [{ message: "POST body missing, invalid Content-Type, or JSON object has no keys.", extensions: { code: "BAD_REQUEST" } }],
      });
    const result = fake.execute(body.query, body.variables ?? {});
    if (result.error)
      return send(result.status, {
        errors: [{ message: result.error.message, extensions: { code: result.error.code } }],
        ...(result.status === 200 ? { data: null } : {}),
      });
    send(200, { data: result.data });
  });
  const { origin, close } = await listenLoopback(server);
  return { url: `${origin}/graphql`, requests, pods: fake.pods, close };
}

/** A running pod as RunPod answers it (with runtime: past its image pull). */
export function runpodPodRow(id: string, overrides: Record<string, unknown> = {}): PodRecord {
  return {
    id,
    name: `job-${id}`,
    desiredStatus: "RUNNING",
    costPerHr: 0.69,
    gpuCount: 1,
    imageName: "runpod/pytorch:2.1.0",
    env: ["JOB=train"],
    dockerArgs: "",
    dockerId: null,
    machineId: `m-${id}`,
    containerDiskInGb: 20,
    volumeInGb: 40,
    volumeMountPath: "/workspace",
    memoryInGb: 62,
    vcpuCount: 8,
    podType: "RESERVED",
    port: null,
    ports: "8888/http",
    uptimeSeconds: 600,
    lastStatusChange: "Rented by User",
    machine: { gpuDisplayName: "RTX 4090", podHostId: `${id}-host` },
    runtime: {
      uptimeInSeconds: 600,
      ports: [],
      gpus: [{ id: "gpu0", gpuUtilPercent: 80, memoryUtilPercent: 40 }],
      container: { cpuPercent: 12, memoryPercent: 30 },
    },
    ...overrides,
  };
}
