/**
 * RunPod's REST API (https://rest.runpod.io/v1) for the RunPod stand-in (runpod-server.ts serves it
 * under `/v1` beside `/graphql`, over the same pods). Written from RunPod's own API reference, not
 * from fleetwarden's client: the OpenAPI pages https://docs.runpod.io/api-reference/pods/GET/pods.md,
 * .../GET/pods/podId, .../POST/pods, .../POST/pods/podId/start, .../POST/pods/podId/stop and
 * .../DELETE/pods/podId, whose source is runpod/docs api-reference/openapi.json (read at commit
 * a900806e253c4f8c16da27d1a4370e72456da4cb; also f17efc52; servers `https://rest.runpod.io/v1`; its
 * paths have no GPU type, price or balance: those stay on GraphQL):
 * - every call needs `Authorization: Bearer <key>` (security scheme ApiKey); else 401;
 * - `GET /pods` answers an array of Pod, `GET /pods/{podId}` one Pod, an unknown id a 404 ("Pod
 *   not found.");
 * - the Pod: `id`, `name`, `image`, `desiredStatus` (RUNNING | EXITED | TERMINATED), `costPerHr`,
 *   `adjustedCostPerHr`, `gpu { id count displayName }`, `env` an object, `ports` a list ("8888/http"), `containerDiskInGb`, `volumeInGb`,
 *   `volumeMountPath`, `dockerStartCmd` (argv), `machineId`, `lastStartedAt`, `machine`
 *   (costPerHr is a number in the schema, a string in the page's example: the client takes both);
 * - `POST /pods` takes PodCreateInput (the fields in CREATE_FIELDS; gpuTypeIds, ports, dockerStartCmd
 *   lists, env an object, cloudType SECURE | COMMUNITY, computeType GPU | CPU) and answers 201 with
 *   the Pod; a field it does not define, or of the wrong type, is a 400;
 * - `POST /pods/{podId}/start`, `/stop` and `DELETE /pods/{podId}`: 200 with no content; an
 *   unknown pod a 400 ("Invalid Pod ID."), as the spec lists no 404 for them; 401 unauthorized.
 * Failure texts are RunPod's own, as its clients have quoted them: a create with no capacity
 * "There are no longer any instances available with the requested specifications. Please refresh
 * and try again." (runpod/runpodctl#189, mlabonne/llm-autoeval#3), a start on a host whose GPUs
 * were taken "There are not enough free GPUs on the host machine to start this pod."
 * (runpod/runpod-python#168). The error body is `{"error": …, "status": …}`: the reference names
 * status codes only, so the body shape is the stand-in's assumption and the client reads the text
 * only for its message. TERMINATED pods are not listed.
 */
import type { PodRecord } from "./runpod-server.ts";

export interface RestFailures {
  /** Every create answers RunPod's no-capacity refusal with this status (400 unless told). */
  noCapacity?: boolean | number;
  /** Starting a stopped pod finds its host's GPUs taken. */
  hostGpusTaken?: boolean;
}

export interface RestAnswer {
  status: number;
  body: unknown;
}

/** A 200 the spec documents without content: an empty body. */
const NO_CONTENT: RestAnswer = { status: 200, body: undefined };
const fail = (status: number, error: string): RestAnswer => ({ status, body: { error, status } });

/** PodCreateInput's fields (POST /pods) and the JSON type each must have. */
const CREATE_FIELDS: Record<string, "string" | "number" | "boolean" | "string[]" | "object" | "string|null"> = {
  allowedCudaVersions: "string[]",
  cloudType: "string",
  computeType: "string",
  containerDiskInGb: "number",
  containerRegistryAuthId: "string",
  countryCodes: "string[]",
  cpuFlavorIds: "string[]",
  cpuFlavorPriority: "string",
  dataCenterIds: "string[]",
  dataCenterPriority: "string",
  dockerEntrypoint: "string[]",
  dockerStartCmd: "string[]",
  env: "object",
  globalNetworking: "boolean",
  gpuCount: "number",
  gpuTypeIds: "string[]",
  gpuTypePriority: "string",
  imageName: "string",
  interruptible: "boolean",
  locked: "boolean",
  minDiskBandwidthMBps: "number",
  minDownloadMbps: "number",
  minRAMPerGPU: "number",
  minUploadMbps: "number",
  minVCPUPerGPU: "number",
  name: "string",
  networkVolumeId: "string",
  ports: "string[]",
  supportPublicIp: "boolean",
  templateId: "string|null",
  vcpuCount: "number",
  volumeInGb: "number",
  volumeMountPath: "string",
};

function typeProblem(key: string, value: unknown): string | null {
  const want = CREATE_FIELDS[key];
  if (!want) return `unknown field "${key}" in PodCreateInput`;
  const ok =
    want === "string[]"
      ? Array.isArray(value) && value.every((v) => typeof v === "string")
      : want === "object"
        ? typeof value === "object" && value !== null && !Array.isArray(value) && Object.values(value).every((v) => typeof v === "string")
        : want === "string|null"
          ? value === null || typeof value === "string"
          : typeof value === want;
  return ok ? null : `"${key}" must be ${want}`;
}

/** A stored pod as RunPod's REST API shows it. */
export function restView(pod: PodRecord): Record<string, unknown> {
  const env = Object.fromEntries(
    ((pod.env as string[] | undefined) ?? []).flatMap((e) => {
      const at = e.indexOf("=");
      return at > 0 ? [[e.slice(0, at), e.slice(at + 1)]] : [];
    }),
  );
  const ports = typeof pod.ports === "string" && pod.ports ? pod.ports.split(",").map((p) => p.trim()) : [];
  const machine = (pod.machine as { gpuDisplayName?: string } | null | undefined) ?? null;
  const cost = typeof pod.costPerHr === "number" ? pod.costPerHr : null;
  return {
    id: pod.id,
    name: pod.name ?? null,
    image: pod.imageName ?? null,
    desiredStatus: pod.desiredStatus,
    costPerHr: cost,
    adjustedCostPerHr: cost,
    gpu: { id: machine?.gpuDisplayName ?? null, count: pod.gpuCount ?? 1, displayName: machine?.gpuDisplayName ?? null },
    env,
    ports,
    containerDiskInGb: pod.containerDiskInGb ?? null,
    volumeInGb: pod.volumeInGb ?? null,
    volumeMountPath: pod.volumeMountPath ?? null,
    dockerStartCmd: (pod.dockerStartCmd as string[] | undefined) ?? [],
    machineId: pod.machineId ?? null,
    lastStartedAt: pod.lastStartedAt ?? null,
    interruptible: false,
    locked: false,
    machine: machine ? { gpuDisplayName: machine.gpuDisplayName ?? null } : null,
  };
}

/**
 * One REST request on the pods (`path` below /v1, auth already checked). `makePod` builds a new
 * pod record (the GraphQL side's shape) from what the create asked for.
 */
export function answerRest(
  pods: Map<string, PodRecord>,
  method: string,
  path: string,
  body: unknown,
  failures: RestFailures,
  makePod: (fields: Record<string, unknown>) => PodRecord,
): RestAnswer {
  if (path === "/pods" && method === "GET")
    return { status: 200, body: [...pods.values()].filter((p) => p.desiredStatus !== "TERMINATED").map(restView) };
  if (path === "/pods" && method === "POST") return create(pods, body, failures, makePod);
  const match = /^\/pods\/([^/]+)(\/start|\/stop)?$/.exec(path);
  if (!match) return fail(404, `no route ${method} ${path}`);
  const pod = pods.get(decodeURIComponent(match[1]!));
  const action = match[2] ?? "";
  if (!["GET/", "DELETE/", "POST/start", "POST/stop"].includes(`${method}/${action.slice(1)}`))
    return fail(405, `method ${method} not allowed on ${path}`);
  if (!pod || pod.desiredStatus === "TERMINATED") return method === "GET" ? fail(404, "Pod not found.") : fail(400, "Invalid Pod ID.");
  switch (`${method}${action}`) {
    case "GET":
      return { status: 200, body: restView(pod) };
    case "DELETE":
      pods.delete(pod.id);
      return NO_CONTENT;
    case "POST/stop":
      Object.assign(pod, { desiredStatus: "EXITED", runtime: null });
      return NO_CONTENT;
    default:
      if (failures.hostGpusTaken && pod.desiredStatus !== "RUNNING")
        return fail(400, "There are not enough free GPUs on the host machine to start this pod.");
      Object.assign(pod, { desiredStatus: "RUNNING", runtime: null });
      return NO_CONTENT;
  }
}

function create(
  pods: Map<string, PodRecord>,
  body: unknown,
  failures: RestFailures,
  makePod: (fields: Record<string, unknown>) => PodRecord,
): RestAnswer {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return fail(400, "request body must be a PodCreateInput object");
  const fields = body as Record<string, unknown>;
  for (const [key, value] of Object.entries(fields)) {
    const problem = typeProblem(key, value);
    if (problem) return fail(400, problem);
  }
  if (fields.cloudType !== undefined && !["SECURE", "COMMUNITY"].includes(fields.cloudType as string))
    return fail(400, `cloudType must be SECURE or COMMUNITY, not ${JSON.stringify(fields.cloudType)}`);
  if (fields.computeType !== undefined && !["GPU", "CPU"].includes(fields.computeType as string))
    return fail(400, `computeType must be GPU or CPU, not ${JSON.stringify(fields.computeType)}`);
  if (typeof fields.imageName !== "string" && typeof fields.templateId !== "string") return fail(400, "imageName is required");
  if (fields.computeType !== "CPU" && !(fields.gpuTypeIds as string[] | undefined)?.length)
    return fail(400, "gpuTypeIds is required for a GPU pod");
  if (failures.noCapacity)
    return fail(
      typeof failures.noCapacity === "number" ? failures.noCapacity : 400,
      "There are no longer any instances available with the requested specifications. Please refresh and try again.",
    );
  const pod = makePod(fields);
  pods.set(pod.id, pod);
  return { status: 201, body: restView(pod) };
}
