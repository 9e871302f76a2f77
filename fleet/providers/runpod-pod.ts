/**
 * RunPod's pod, as its REST API answers it (GET https://rest.runpod.io/v1/pods and /pods/{podId},
 * the Pod schema of https://docs.runpod.io/api-reference/pods/GET/pods.md: `image`, `env` an
 * object, `ports` a list, `costPerHr`, `gpu { count displayName }`, `lastStartedAt`,
 * `desiredStatus` RUNNING | EXITED | TERMINATED), joined to the pod's runtime, which REST does not
 * carry and only GraphQL answers (`runtime { uptimeInSeconds gpus { gpuUtilPercent } }`), and how
 * the two map onto the one instance model (a REST pod is turned into the GraphQL-shaped RunpodPod by
 * `fromRest`). The GraphQL pod is as runpod-python reads it (runpod/runpod-python 07fc6e2b,
 * runpod/api/queries/pods.py QUERY_POD), its `runtime { uptimeInSeconds gpus { gpuUtilPercent } }`
 * as RunPod's GraphQL docs list it (https://docs.runpod.io/sdks/graphql/manage-pods.md).
 *
 * States (`desiredStatus`: REST's enum is RUNNING | EXITED | TERMINATED; GraphQL's also had CREATED |
 * RESTARTING | PAUSED | DEAD, still mapped): RUNNING with no runtime yet is a pod still pulling its image (dstack's RunPod backend
 * waits for `runtime` to be non-null: src/dstack/_internal/core/backends/runpod/api_client.py
 * `wait_for_instance`), so `loading`; RUNNING with a runtime is `running`; EXITED is what a stop
 * leaves, so `stopped` (its volume still bills); PAUSED is `stopped` too; RESTARTING is
 * `rebooting`; CREATED is `created`; DEAD (its host lost) is `exited`; TERMINATED is gone and
 * left out, as a terminated Vast.ai instance is. Anything else is `unknown`.
 */
import { z } from "zod";
import type { FleetInstance, InstanceState } from "./provider.ts";

/** The runtime (image pulled, uptime, GPU use) REST leaves out: every pod's, or one pod's. */
const RUNTIME_FIELDS = "id runtime { uptimeInSeconds gpus { id gpuUtilPercent } }";
export const LIST_RUNTIMES = `query podRuntimes { myself { pods { ${RUNTIME_FIELDS} } } }`;
export const GET_RUNTIME = `query podRuntime($input: PodFilter!) { pod(input: $input) { ${RUNTIME_FIELDS} } }`;
export const GPU_TYPES = `query GpuTypes($lowest: GpuLowestPriceInput) { gpuTypes { id displayName memoryInGb lowestPrice(input: $lowest) { minimumBidPrice uninterruptablePrice } } }`;

const num = z.number().nullable().optional();

export const runpodPod = z.object({
  id: z.string().min(1),
  name: z.string().nullable().optional(),
  desiredStatus: z.string(),
  costPerHr: num,
  gpuCount: num,
  imageName: z.string().nullable().optional(),
  /** "KEY=value" strings. */
  env: z.array(z.string()).nullable().optional(),
  dockerArgs: z.string().nullable().optional(),
  machineId: z.string().nullable().optional(),
  containerDiskInGb: num,
  volumeInGb: num,
  volumeMountPath: z.string().nullable().optional(),
  /** "8888/http,22/tcp". */
  ports: z.string().nullable().optional(),
  machine: z.object({ gpuDisplayName: z.string().nullable().optional() }).nullable().optional(),
  runtime: z
    .object({
      uptimeInSeconds: num,
      gpus: z
        .array(z.object({ id: z.string().nullable().optional(), gpuUtilPercent: num }))
        .nullable()
        .optional(),
    })
    .nullable()
    .optional(),
});
export type RunpodPod = z.infer<typeof runpodPod>;

/** A GraphQL answer: `data` when it worked, `errors` (RunPod answers them with 200) when not. */
export const graphqlAnswer = z.object({
  data: z.unknown().optional(),
  errors: z.array(z.object({ message: z.string() }).passthrough()).optional(),
});

const podRuntime = runpodPod.pick({ id: true, runtime: true });
export type PodRuntime = z.infer<typeof podRuntime>;
export const runtimeList = z.object({ myself: z.object({ pods: z.array(podRuntime) }) });
export const runtimeShow = z.object({ pod: podRuntime.nullable() });

/** RunPod's REST Pod (the fields fleetwarden reads; RunPod sends more). costPerHr is a string ("0.74") in RunPod's example. */
export const restPod = z.object({
  id: z.string().min(1),
  name: z.string().nullable().optional(),
  desiredStatus: z.string(),
  costPerHr: z.union([z.number(), z.string()]).nullable().optional(),
  adjustedCostPerHr: num,
  image: z.string().nullable().optional(),
  env: z.record(z.string(), z.string()).nullable().optional(),
  dockerStartCmd: z.array(z.string()).nullable().optional(),
  machineId: z.string().nullable().optional(),
  containerDiskInGb: num,
  volumeInGb: num,
  volumeMountPath: z.string().nullable().optional(),
  ports: z.array(z.string()).nullable().optional(),
  lastStartedAt: z.string().nullable().optional(),
  gpu: z.object({ count: num, displayName: z.string().nullable().optional() }).nullable().optional(),
  machine: z.object({ gpuDisplayName: z.string().nullable().optional() }).nullable().optional(),
});
export type RestPod = z.infer<typeof restPod>;
export const restPodList = z.array(restPod);
export const restCreated = z.object({ id: z.string().min(1) }).passthrough();
/** RunPod's REST error body ({"error": "…"}); its docs give only the status codes. */
export const restError = z.object({ error: z.string() }).passthrough();

/** The start command fleetwarden sends for a spec's onstart (REST takes argv, GraphQL took a string). */
export function startCommand(onstart: string): string[] {
  return ["sh", "-c", onstart];
}

function onstartOf(cmd: readonly string[] | null | undefined): string | null {
  if (!cmd?.length) return null;
  return cmd.length === 3 && cmd[0] === "sh" && cmd[1] === "-c" ? cmd[2]! : cmd.join(" ");
}

/** A REST pod as the GraphQL-shaped pod podToInstance maps, with its runtime from GraphQL (null: none yet). */
export function fromRest(pod: RestPod, runtime: PodRuntime["runtime"] | null): RunpodPod {
  const cost = typeof pod.costPerHr === "string" ? Number(pod.costPerHr) : pod.costPerHr;
  return {
    id: pod.id,
    name: pod.name ?? null,
    desiredStatus: pod.desiredStatus,
    costPerHr: pod.adjustedCostPerHr ?? (typeof cost === "number" && Number.isFinite(cost) ? cost : null),
    gpuCount: pod.gpu?.count ?? null,
    imageName: pod.image ?? null,
    env: Object.entries(pod.env ?? {}).map(([k, v]) => `${k}=${v}`),
    dockerArgs: onstartOf(pod.dockerStartCmd),
    machineId: pod.machineId ?? null,
    containerDiskInGb: pod.containerDiskInGb ?? null,
    volumeInGb: pod.volumeInGb ?? null,
    volumeMountPath: pod.volumeMountPath ?? null,
    ports: pod.ports?.length ? pod.ports.join(",") : null,
    machine: { gpuDisplayName: pod.machine?.gpuDisplayName ?? pod.gpu?.displayName ?? null },
    runtime: runtime ?? null,
  };
}
export const gpuTypes = z.object({
  gpuTypes: z.array(
    z.object({
      id: z.string(),
      displayName: z.string(),
      memoryInGb: num,
      lowestPrice: z.object({ minimumBidPrice: num, uninterruptablePrice: num }).nullable().optional(),
    }),
  ),
});

export function isTerminated(pod: { desiredStatus: string }): boolean {
  return pod.desiredStatus === "TERMINATED";
}

export function podState(pod: RunpodPod): InstanceState {
  switch (pod.desiredStatus) {
    case "RUNNING":
      return pod.runtime ? "running" : "loading";
    case "EXITED":
    case "PAUSED":
      return "stopped";
    case "RESTARTING":
      return "rebooting";
    case "CREATED":
      return "created";
    case "DEAD":
      return "exited";
    default:
      return "unknown";
  }
}

function envRecord(env: readonly string[] | null | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of env ?? []) {
    const at = item.indexOf("=");
    if (at > 0) out[item.slice(0, at)] = item.slice(at + 1);
  }
  return out;
}

function meanUtil(pod: RunpodPod): number | null {
  const utils = (pod.runtime?.gpus ?? []).map((g) => g.gpuUtilPercent).filter((u): u is number => typeof u === "number");
  return utils.length ? utils.reduce((a, b) => a + b, 0) / utils.length : null;
}

export function podToInstance(pod: RunpodPod, now: number): FleetInstance {
  const state = podState(pod);
  const uptime = pod.runtime?.uptimeInSeconds;
  const diskGb = pod.containerDiskInGb ?? null;
  return {
    id: pod.id,
    state,
    label: pod.name ?? null,
    gpuName: pod.machine?.gpuDisplayName ?? null,
    gpuCount: pod.gpuCount ?? null,
    pricePerHour: pod.costPerHr ?? null,
    statusMessage: `RunPod ${pod.desiredStatus}${pod.desiredStatus === "RUNNING" && !pod.runtime ? " (starting: no runtime yet)" : ""}`,
    startedAt: state === "running" && typeof uptime === "number" ? now - uptime * 1000 : null,
    gpuUtil: state === "running" ? meanUtil(pod) : null,
    machineId: pod.machineId ?? null,
    diskGb,
    reliability: null,
    spec: {
      image: pod.imageName ?? null,
      env: envRecord(pod.env),
      onstart: pod.dockerArgs || null,
      label: pod.name ?? null,
      diskGb,
      // Kept by a replacement (runpod-python's create_pod sends them: runpod/api/mutations/pods.py).
      ports: pod.ports || null,
      volumeGb: pod.volumeInGb ?? null,
      volumeMountPath: pod.volumeMountPath || null,
    },
  };
}
