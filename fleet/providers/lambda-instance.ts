/**
 * Lambda Cloud's instance and instance type, as its API answers them, and how they map onto the
 * one instance model. Shapes as dstack's and SkyPilot's clients read them (dstackai/dstack
 * 511c318c, src/dstack/_internal/core/backends/lambdalabs/api_client.py and compute.py:
 * `data` wraps every answer, an instance's `status` is "booting" until it has an `ip`,
 * `/instance-types` answers `{name: {instance_type, regions_with_capacity_available: [{name}]}}`;
 * skypilot-org/skypilot 0c059089, sky/provision/lambda_cloud/lambda_utils.py: errors are
 * `{"error": {"code", "message"}}`).
 *
 * States: booting → loading, active → running, unhealthy → unknown (Lambda cannot say more),
 * terminating → offline, terminated → gone (left out). Lambda instances are VMs without an image
 * or environment of ours, so a spec carries the name, disk and what a launch needs again (`launch`:
 * instance type, region, `ssh_key_names`, `file_system_names`, the fields GET /instances answers and
 * POST /instance-operations/launch takes: Lambda's Cloud API docs, cbrownstein-lambda/lambda-docs-mkdocs
 * 1ecdf8a4, docs/public-cloud/cloud-api.md); GPU name and count come from
 * the instance type ("1x A100 (40 GB SXM4)", `specs.gpus`), its price from `price_cents_per_hour`.
 */
import { z } from "zod";
import type { FleetInstance, InstanceState } from "./provider.ts";

const instanceType = z.object({
  name: z.string(),
  description: z.string().nullable().optional(),
  price_cents_per_hour: z.number(),
  specs: z
    .object({
      vcpus: z.number().optional(),
      memory_gib: z.number().optional(),
      storage_gib: z.number().nullable().optional(),
      gpus: z.number().nullable().optional(),
    })
    .passthrough()
    .optional(),
});

export const lambdaInstance = z.object({
  id: z.string().min(1),
  name: z.string().nullable().optional(),
  status: z.string(),
  ip: z.string().nullable().optional(),
  region: z.object({ name: z.string() }).passthrough().nullable().optional(),
  instance_type: instanceType,
  ssh_key_names: z.array(z.string()).nullable().optional(),
  file_system_names: z.array(z.string()).nullable().optional(),
});
export type LambdaInstance = z.infer<typeof lambdaInstance>;

export const instanceList = z.object({ data: z.array(lambdaInstance) });
export const instanceShow = z.object({ data: lambdaInstance });
export const launched = z.object({ data: z.object({ instance_ids: z.array(z.string()).min(1) }) });
export const acted = z.object({ data: z.record(z.string(), z.unknown()) });
export const sshKeys = z.object({ data: z.array(z.object({ name: z.string() }).passthrough()) });
export const instanceTypes = z.object({
  data: z.record(
    z.string(),
    z.object({ instance_type: instanceType, regions_with_capacity_available: z.array(z.object({ name: z.string() }).passthrough()) }),
  ),
});

/** Lambda's error body's own words, `code: message`. */
export function lambdaErrorText(body: unknown): string | null {
  const parsed = z.object({ error: z.object({ code: z.string().optional(), message: z.string().optional() }) }).safeParse(body);
  return parsed.success ? `${parsed.data.error.code ?? "error"}: ${parsed.data.error.message ?? ""}` : null;
}

export function isGone(instance: LambdaInstance): boolean {
  return instance.status === "terminated";
}

export function lambdaState(status: string): InstanceState {
  switch (status) {
    case "booting":
      return "loading";
    case "active":
      return "running";
    case "terminating":
      return "offline";
    default:
      return "unknown";
  }
}

/** "1x A100 (40 GB SXM4)" → "A100 (40 GB SXM4)"; the type name when there is no description. */
export function gpuNameOf(type: z.infer<typeof instanceType>): string {
  return (type.description ?? type.name).replace(/^\d+x\s+/, "");
}

export function lambdaToInstance(instance: LambdaInstance): FleetInstance {
  const type = instance.instance_type;
  const diskGb = type.specs?.storage_gib ?? null;
  return {
    id: instance.id,
    state: lambdaState(instance.status),
    label: instance.name ?? null,
    gpuName: gpuNameOf(type),
    gpuCount: type.specs?.gpus ?? null,
    pricePerHour: type.price_cents_per_hour / 100,
    statusMessage: `Lambda ${instance.status}${instance.region ? ` in ${instance.region.name}` : ""}`,
    startedAt: null,
    machineId: null,
    diskGb,
    reliability: null,
    spec: {
      image: null,
      env: {},
      label: instance.name ?? null,
      diskGb,
      launch: instance.region
        ? {
            instanceType: type.name,
            region: instance.region.name,
            sshKeyNames: instance.ssh_key_names ?? [],
            fileSystemNames: instance.file_system_names ?? [],
          }
        : null,
    },
  };
}
