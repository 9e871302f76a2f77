/**
 * RunPod's pod, as its GraphQL API answers it, and how it maps onto the one instance model.
 * Fields are those runpod-python asks for (runpod/runpod-python 07fc6e2b,
 * runpod/api/queries/pods.py QUERY_POD / generate_pod_query), plus `runtime { uptimeInSeconds
 * gpus { gpuUtilPercent } }`, which RunPod's GraphQL docs list for a pod's runtime
 * (https://docs.runpod.io/sdks/graphql/manage-pods.md, the schema at graphql-spec.runpod.io).
 *
 * States (`desiredStatus`, the enum RUNNING | EXITED | TERMINATED | CREATED | RESTARTING | PAUSED |
 * DEAD): RUNNING with no runtime yet is a pod still pulling its image (dstack's RunPod backend
 * waits for `runtime` to be non-null: src/dstack/_internal/core/backends/runpod/api_client.py
 * `wait_for_instance`), so `loading`; RUNNING with a runtime is `running`; EXITED is what podStop
 * leaves, so `stopped` (its volume still bills); PAUSED is `stopped` too; RESTARTING is
 * `rebooting`; CREATED is `created`; DEAD (its host lost) is `exited`; TERMINATED is gone and
 * left out, as a terminated Vast.ai instance is. Anything else is `unknown`.
 */
import { z } from "zod";
import type { FleetInstance, InstanceState } from "./provider.ts";

/** The selection every pod read asks for (the fake refuses any field not in RunPod's schema). */
export const POD_FIELDS = `id name desiredStatus costPerHr gpuCount imageName env dockerArgs machineId containerDiskInGb volumeInGb volumeMountPath ports
  machine { gpuDisplayName }
  runtime { uptimeInSeconds gpus { id gpuUtilPercent } }`;

export const LIST_PODS = `query myPods { myself { pods { ${POD_FIELDS} } } }`;
export const GET_POD = `query pod($input: PodFilter!) { pod(input: $input) { ${POD_FIELDS} } }`;
export const STOP_POD = `mutation stop($input: PodStopInput!) { podStop(input: $input) { id desiredStatus } }`;
export const RESUME_POD = `mutation resume($input: PodResumeInput!) { podResume(input: $input) { id desiredStatus } }`;
export const TERMINATE_POD = `mutation terminate($input: PodTerminateInput!) { podTerminate(input: $input) }`;
export const DEPLOY_POD = `mutation deploy($input: PodFindAndDeployOnDemandInput!) { podFindAndDeployOnDemand(input: $input) { id machineId } }`;
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

export const podList = z.object({ myself: z.object({ pods: z.array(runpodPod) }) });
export const podShow = z.object({ pod: runpodPod.nullable() });
export const deployed = z.object({ podFindAndDeployOnDemand: z.object({ id: z.string().min(1) }).passthrough() });
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

export function isTerminated(pod: RunpodPod): boolean {
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
