/**
 * What Vast.ai answers about instances, validated with zod and mapped onto the one FleetInstance
 * model. Vast describes a state with three fields (actual_status: the container; intended_status:
 * what the user asked for; cur_state: the machine contract); the mapping keeps the container's
 * truth and falls back to the others only while the container has no status yet. A malformed
 * answer fails the parse: it is an error, never an empty or partial fleet.
 *
 * An instance whose container is `destroyed` (or `terminated`, which vast-cli's `instance_exist`
 * treats alike: vast-ai/vast-cli 55679830 vast.py), whose intended status is one of those, or whose
 * machine contract is `unloaded` no longer exists as a rental, even while Vast still lists it: it
 * is gone, exactly as one Vast no longer lists (the provider leaves it out, and reconciliation
 * marks it gone), never an `unknown` or `offline` instance that seems to need attention.
 *
 * Economics fields, named as vast-cli names them (vastai/data/instance.py `Instance` at
 * vast-ai/vast-cli 55679830: gpu_util, disk_space, disk_usage, end_date, dph_total; is_bid and
 * storage_total_cost from the `GET /api/v1/instances/` schema vast-cli kept in
 * openapi/yaml/show_instances.yaml until a501c004, removed by 34f535d "move api docs"):
 * - `gpu_util` is a percentage (vast.py's instance_fields prints it as "Util. %").
 * - `disk_usage` and `disk_space` are both GB (used, allocated): diskUsedPct = usage / space.
 * - `dph_total` is everything the running rental costs per hour, storage included: that schema's
 *   `search` example has gpuCostPerHour 0.8 + diskHour 0.0021 = totalHour 0.8021 = dph_total,
 *   dph_base 0.8. `storage_total_cost` (0.0021 there, the diskHour) is the storage part, which is
 *   what a stopped instance keeps costing: pricePerHour = dph_total, storagePerHour =
 *   storage_total_cost.
 * - `end_date` is the contract's end in seconds since the epoch; `is_bid` marks an interruptible
 *   rental. An interruptible instance whose container is stopped while its intended status is
 *   still running was stopped by a higher bid, not by its owner: stopReason "outbid".
 *
 * What a replacement is made from (vastai/data/instance.py `Instance`; vast-ai/docs c6246226
 * api-reference/openapi/yaml/show_instances.yaml): `machine_id` (the host), `reliability2` (the
 * host's score, 0-1), `disk_space` (GB), and the spec: `image_uuid` (the image), `template_hash_id`,
 * `extra_env` (pairs, port mappings such as `["-p 8080:8080", "1"]` included, as create takes them
 * back), `onstart` and `label`. No image and no template: no spec.
 */
import { z } from "zod";
import { INSTANCE_STATES, type FleetInstance, type InstanceSpec, type InstanceState } from "./provider.ts";

const text = z.string().nullish();
const number = z.number().nullish();

export const vastInstance = z.object({
  id: z.union([z.number().int().nonnegative(), z.string().regex(/^\d+$/)]),
  actual_status: text,
  intended_status: text,
  cur_state: text,
  status_msg: text,
  gpu_name: text,
  num_gpus: number,
  dph_total: number,
  label: text,
  /** Seconds since the epoch (fractional). */
  start_date: number,
  gpu_util: number,
  disk_space: number,
  disk_usage: number,
  storage_total_cost: number,
  end_date: number,
  is_bid: z.boolean().nullish(),
  machine_id: z.number().int().nullish(),
  reliability2: number,
  image_uuid: text,
  /** `[[name, value], …]` (vast-cli `show_instances` turns it into a dict); a malformed one is no spec env, never a failed list. */
  extra_env: z
    .array(z.tuple([z.string(), z.string()]))
    .nullish()
    .catch(null),
  onstart: text,
  template_hash_id: text,
});
export type VastInstance = z.infer<typeof vastInstance>;

/**
 * `GET /api/v1/instances/`: one page, the token of the next (absent or null on the last page), and
 * how many instances the whole list holds (over every page, as vast-cli's tests page it).
 */
export const vastInstancePage = z.object({
  instances: z.array(vastInstance),
  next_token: z.string().nullish(),
  total_instances: z.number().int().nonnegative().nullish(),
});

/** `GET /api/v0/instances/{id}/`: the instance under `instances` (an object, not an array). */
export const vastInstanceShow = z.object({ instances: vastInstance.nullable() });

/** Answer of the mutating calls: `{success, msg?}` or `{success:false, error, msg}`. */
export const vastActionAnswer = z.object({
  success: z.boolean().optional(),
  error: z.string().nullish(),
  msg: z.string().nullish(),
});

/** `PUT /api/v0/instances/request_logs/{id}/`: where the log will appear. */
export const vastLogsAnswer = z.object({
  success: z.boolean().optional(),
  result_url: z.string().nullish(),
  error: z.string().nullish(),
  msg: z.string().nullish(),
});

const KNOWN = new Set<string>(INSTANCE_STATES);
const MAX_MESSAGE = 1000;
const GONE_STATUSES = new Set(["destroyed", "terminated"]);

/** The rental is over (see the header): the provider reports it as not there at all. */
export function isGoneInstance(raw: Pick<VastInstance, "actual_status" | "intended_status" | "cur_state">): boolean {
  return GONE_STATUSES.has(raw.actual_status ?? "") || GONE_STATUSES.has(raw.intended_status ?? "") || raw.cur_state === "unloaded";
}

/** The state of an instance that is not gone (isGoneInstance is asked first). */
export function vastState(
  actual: string | null | undefined,
  intended: string | null | undefined,
  cur: string | null | undefined,
): InstanceState {
  if (actual) return KNOWN.has(actual) ? (actual as InstanceState) : "unknown";
  // No container status yet: being provisioned, unless it was stopped.
  if (intended === "stopped" || cur === "stopped") return "stopped";
  return "created";
}

/** A percentage, or null when the provider sent none or one out of 0-100 (never a guess). */
function percent(value: number | null | undefined): number | null {
  return value === null || value === undefined || !Number.isFinite(value) || value < 0 || value > 100 ? null : Math.round(value * 10) / 10;
}

function diskUsedPct(raw: VastInstance): number | null {
  if (raw.disk_usage === null || raw.disk_usage === undefined || !raw.disk_space) return null;
  return percent((raw.disk_usage / raw.disk_space) * 100);
}

/** Stopped by a higher bid (see the header): interruptible, stopped, and meant to be running. */
export function isOutbid(raw: Pick<VastInstance, "is_bid" | "actual_status" | "intended_status" | "cur_state">): boolean {
  return (
    raw.is_bid === true &&
    raw.intended_status === "running" &&
    (raw.actual_status === "stopped" || (!raw.actual_status && raw.cur_state === "stopped"))
  );
}

/**
 * Vast's message; for a container status we have no state for (`unknown`), that status first, so
 * `scheduling` (a start waiting for the host's GPUs: vast-ai/vast-cli fea8ca1e vast.py
 * `start__instance`, "stuck in the scheduling state … the required resources on the machine …
 * are currently unavailable") stays visible to the lost-GPU rule (replacement-proposal.ts).
 */
function statusOf(actual: string | null | undefined, message: string | undefined): string | null {
  const said = actual && !KNOWN.has(actual) ? `${actual}${message ? `: ${message}` : ""}` : message;
  return said ? said.slice(0, MAX_MESSAGE) : null;
}

export function toFleetInstance(raw: VastInstance): FleetInstance {
  const message = raw.status_msg?.trim();
  const outbid = isOutbid(raw);
  return {
    id: String(raw.id),
    state: outbid ? "stopped" : vastState(raw.actual_status, raw.intended_status, raw.cur_state),
    label: raw.label ?? null,
    gpuName: raw.gpu_name ?? null,
    gpuCount: raw.num_gpus ?? null,
    pricePerHour: raw.dph_total ?? null,
    statusMessage: statusOf(raw.actual_status, message),
    startedAt: raw.start_date ? Math.round(raw.start_date * 1000) : null,
    gpuUtil: percent(raw.gpu_util),
    diskUsedPct: diskUsedPct(raw),
    storagePerHour: raw.storage_total_cost ?? null,
    endsAt: raw.end_date ? Math.round(raw.end_date * 1000) : null,
    interruptible: raw.is_bid ?? null,
    stopReason: outbid ? "outbid" : null,
    machineId: raw.machine_id == null ? null : String(raw.machine_id),
    diskGb: raw.disk_space ?? null,
    reliability: raw.reliability2 ?? null,
    spec: specOf(raw),
  };
}

function specOf(raw: VastInstance): InstanceSpec | null {
  if (!raw.image_uuid && !raw.template_hash_id) return null;
  return {
    image: raw.image_uuid ?? null,
    templateId: raw.template_hash_id ?? null,
    env: Object.fromEntries(raw.extra_env ?? []),
    onstart: raw.onstart ?? null,
    label: raw.label ?? null,
    diskGb: raw.disk_space ?? null,
  };
}
