/**
 * The strict Vast.ai test server's market (vast-server.ts routes to it): offers to search and
 * rent, written from vast-ai/vast-cli at 55679830a2c2adcf5c7fad08bf08717a9591062a and vast-ai/docs
 * at c624622622496828c1ae58edec481bba1f5d675d, not from fleetwarden's client:
 *
 * - search (vast.py `search__offers`, vastai/api/offers.py `search_offers`; docs
 *   api-reference/openapi/yaml/search_offers.yaml): `POST /api/v0/bundles/`, the query as the
 *   JSON body: filters `{field: {op: value}}` with ops eq, neq, gt, gte, lt, lte, in, notin over the
 *   fields search_offers.yaml lists, plus `order` (a list of `[field, "asc"|"desc"]`), `type`,
 *   `limit`, `allocated_storage` and `disable_bundling`. vast-cli always sends `order`, `type`
 *   and `allocated_storage`. Answer `{offers: [...]}`, rows as vastai/data/offer.py names them.
 *   `rented` is "you already rent on it"; an offer rented here is `rented: true, rentable: false`.
 *   dph_total is the seeded figure whatever `allocated_storage` says (the real one adds storage).
 * - create (vast.py `create__instance`, vastai/api/instances.py `create_instance`; docs
 *   create_instance.yaml): `PUT /api/v0/asks/{id}/` with the body fields vast-cli sends (and the
 *   others the docs list); `client_id` is always "me"; `image` is required unless
 *   `template_hash_id` is given; the docs' x-input-validation bounds: image ≤ 1024 chars, label
 *   ≤ 256, each env value ≤ 256, disk ≥ 8 GB, price 0.001–128. Answer `{success: true,
 *   new_contract}`. Refusals as the docs give them: a bad body 400 `invalid_args` ("error
 *   400/3467: Invalid args: …"); an unknown offer, or one already rented (a second create on the
 *   same offer), 404 `invalid_args` "error 404/3603: no_such_ask Instance type by id N is not
 *   available.", with `ask_id`.
 *
 * A rented offer becomes an instance row in the server's list (fields as vastai/data/instance.py
 * names them: image_uuid, extra_env pairs, onstart, template_hash_id, machine_id, disk_space,
 * reliability2…) in state `loading`; `boot(id)` moves it to `running`, the script a test drives.
 *
 * Seeding: `startVastServer({offers: [vastOffer(1, {...})]})` or `server.addOffer(vastOffer(…))`;
 * `server.offers` is the market by offer id, `server.created` the new instance ids in order.
 */
import { isPlainObject, ok, refuse, type Reply } from "./vast-replies.ts";

export type VastOfferRow = Record<string, unknown> & { id: number };

/** search_offers.yaml's filter fields (the request body's properties that take `{op: value}`). */
const FILTER_FIELDS = new Set([
  "verified",
  "rentable",
  "rented",
  "gpu_name",
  "reliability",
  "num_gpus",
  "gpu_ram",
  "duration",
  "machine_id",
  "dlperf_per_dphtotal",
  "dph_total",
  "flops_per_dphtotal",
  "geolocation",
  "gpu_arch",
  "dlperf",
  "cuda_max_good",
  "inet_down",
  "inet_up",
  "inet_down_cost",
  "inet_up_cost",
  "driver_version",
  "compute_cap",
  "cpu_arch",
  "has_avx",
  "cpu_cores",
  "cpu_cores_effective",
  "cpu_ghz",
  "cpu_ram",
  "datacenter",
  "external",
  "disk_bw",
  "disk_space",
  "bw_nvlink",
  "gpu_max_power",
  "gpu_max_temp",
  "gpu_mem_bw",
  "gpu_total_ram",
  "gpu_frac",
  "gpu_display_active",
  "direct_port_count",
  "host_id",
  "id",
  "min_bid",
  "mobo_name",
  "pci_gen",
  "pcie_bw",
  "storage_cost",
  "static_ip",
  "total_flops",
  "os_version",
  "ubuntu_version",
  "verification",
  "vms_enabled",
]);
const SEARCH_OPTIONS = new Set(["order", "type", "limit", "allocated_storage", "disable_bundling"]);
const SEARCH_REQUIRED = ["order", "type", "allocated_storage"];
const OFFER_TYPES = new Set(["on-demand", "ondemand", "bid", "reserved"]);
const OPS = new Set(["eq", "neq", "gt", "gte", "lt", "lte", "in", "notin"]);

/** vast-cli's create body fields, and the docs' others. */
const CREATE_FIELDS = new Set([
  "client_id",
  "image",
  "env",
  "price",
  "disk",
  "label",
  "extra",
  "onstart",
  "image_login",
  "python_utf8",
  "lang_utf8",
  "use_jupyter_lab",
  "jupyter_dir",
  "force",
  "cancel_unavail",
  "template_hash_id",
  "user",
  "runtype",
  "args",
  "volume_info",
  "args_str",
  "target_state",
  "vm",
]);
const FLAGS = ["python_utf8", "lang_utf8", "use_jupyter_lab", "force", "cancel_unavail", "vm"];
const NULLABLE_TEXT = ["extra", "onstart", "image_login", "jupyter_dir", "user", "label", "template_hash_id", "args_str"];
const RUNTYPE_WORDS = new Set([
  "ssh",
  "jupyter",
  "args",
  "ssh_proxy",
  "ssh_direct",
  "ssh_direc",
  "jupyter_proxy",
  "jupyter_direct",
  "jupyter_direc",
]);

const invalid = (msg: string) => refuse(400, "invalid_args", `error 400/3467: Invalid args: ${msg}`);
const notAvailable = (id: number) =>
  refuse(404, "invalid_args", `error 404/3603: no_such_ask Instance type by id ${id} is not available.`, { ask_id: id });

/** An offer row as /api/v0/bundles/ answers it (vastai/data/offer.py names), rentable by default. */
export function vastOffer(id: number, overrides: Record<string, unknown> = {}): VastOfferRow {
  return {
    id,
    ask_contract_id: id,
    machine_id: 100 + id,
    host_id: 5000 + id,
    gpu_name: "RTX 4090",
    num_gpus: 2,
    gpu_ram: 24564,
    disk_space: 200,
    dph_base: 0.6,
    dph_total: 0.62,
    storage_total_cost: 0.02,
    reliability: 0.995,
    reliability2: 0.995,
    rentable: true,
    rented: false,
    verified: true,
    verification: "verified",
    external: false,
    is_bid: false,
    geolocation: "Sweden, SE",
    ...overrides,
  };
}

function matches(value: unknown, op: string, target: unknown): boolean {
  const v = typeof value === "boolean" || value === null || value === undefined ? (value ?? false) : value;
  const num = (x: unknown) => (typeof x === "string" && x.trim() !== "" && !Number.isNaN(Number(x)) ? Number(x) : x);
  const [a, b] = [num(v), num(target)];
  if (op === "eq") return a === b;
  if (op === "neq") return a !== b;
  if (op === "in" || op === "notin") return (target as unknown[]).map(num).includes(a) === (op === "in");
  if (typeof a !== "number" || typeof b !== "number") return false;
  return op === "gt" ? a > b : op === "gte" ? a >= b : op === "lt" ? a < b : a <= b;
}

function searchError(q: Record<string, unknown>): string | null {
  for (const [name, value] of Object.entries(q)) {
    if (SEARCH_OPTIONS.has(name)) continue;
    if (!FILTER_FIELDS.has(name)) return `unknown search field: ${name}`;
    if (!isPlainObject(value) || !Object.keys(value).length) return `${name} must be an object of {operator: value}`;
    for (const [op, target] of Object.entries(value)) {
      if (!OPS.has(op)) return `unknown operator ${op} on ${name}`;
      if ((op === "in" || op === "notin") !== Array.isArray(target))
        return `${name}.${op} takes ${Array.isArray(target) ? "a value" : "a list"}`;
    }
  }
  for (const name of SEARCH_REQUIRED) if (!(name in q)) return `missing ${name}`;
  const order = q.order;
  if (
    !Array.isArray(order) ||
    !order.every((o) => Array.isArray(o) && o.length === 2 && typeof o[0] === "string" && (o[1] === "asc" || o[1] === "desc"))
  )
    return 'order must be a list of [field, "asc"|"desc"]';
  if (!OFFER_TYPES.has(q.type as string)) return `unknown type: ${String(q.type)}`;
  if (q.limit !== undefined && (!Number.isInteger(q.limit) || (q.limit as number) < 1)) return "limit must be a positive integer";
  if (typeof q.allocated_storage !== "number" || q.allocated_storage <= 0) return "allocated_storage must be a positive number of GB";
  return null;
}

function createError(body: Record<string, unknown>): string | null {
  for (const name of Object.keys(body)) if (!CREATE_FIELDS.has(name)) return `unknown field: ${name}`;
  if (body.client_id !== "me") return 'client_id must be "me"';
  const template = body.template_hash_id;
  if (body.image == null && template == null) return "image is required (or a template_hash_id)";
  if (body.image != null && (typeof body.image !== "string" || !body.image || body.image.length > 1024))
    return "image must be a docker image name of at most 1024 characters";
  for (const name of NULLABLE_TEXT) if (body[name] != null && typeof body[name] !== "string") return `${name} must be a string`;
  if (typeof body.label === "string" && body.label.length > 256) return "label is longer than 256 characters";
  for (const name of FLAGS) if (body[name] !== undefined && typeof body[name] !== "boolean") return `${name} must be a boolean`;
  if (
    body.env !== undefined &&
    (!isPlainObject(body.env) || !Object.values(body.env).every((v) => typeof v === "string" && v.length <= 256))
  )
    return "env must be an object of strings of at most 256 characters";
  if (body.disk !== undefined && (typeof body.disk !== "number" || body.disk < 8)) return "disk must be at least 8 GB";
  if (body.price != null && (typeof body.price !== "number" || body.price < 0.001 || body.price > 128))
    return "price must be from 0.001 to 128 $/h";
  if (body.runtype !== undefined && (typeof body.runtype !== "string" || !body.runtype.split(" ").every((w) => RUNTYPE_WORDS.has(w))))
    return `unknown runtype: ${String(body.runtype)}`;
  return null;
}

export class VastMarket {
  readonly offers = new Map<number, VastOfferRow>();
  readonly created: number[] = [];
  private nextId = 30_000_001;

  constructor(
    private readonly instances: Map<number, Record<string, unknown> & { id: number }>,
    seed: VastOfferRow[] = [],
  ) {
    for (const offer of seed) this.addOffer(offer);
  }

  addOffer(offer: VastOfferRow): void {
    this.offers.set(offer.id, { ...offer });
  }

  search(body: unknown): Reply {
    if (!isPlainObject(body)) return refuse(400, "invalid_request", "Invalid json body");
    const problem = searchError(body);
    if (problem) return refuse(400, "invalid_request", problem);
    const filters = Object.entries(body).filter(([name]) => FILTER_FIELDS.has(name)) as [string, Record<string, unknown>][];
    const rows = [...this.offers.values()].filter((row) =>
      filters.every(([name, ops]) => Object.entries(ops).every(([op, target]) => matches(row[name], op, target))),
    );
    for (const [field, dir] of [...(body.order as [string, string][])].reverse()) {
      rows.sort((a, b) => ((a[field] as number) - (b[field] as number)) * (dir === "desc" ? -1 : 1));
    }
    return ok({ offers: rows.slice(0, (body.limit as number | undefined) ?? rows.length) });
  }

  rent(body: unknown, offerId: number): Reply {
    if (!isPlainObject(body)) return invalid("the body must be a JSON object");
    const problem = createError(body);
    if (problem) return invalid(problem);
    const offer = this.offers.get(offerId);
    if (!offer || offer.rented === true || offer.rentable !== true) return notAvailable(offerId);
    Object.assign(offer, { rented: true, rentable: false });
    const id = this.nextId++;
    const env = (body.env ?? {}) as Record<string, string>;
    this.instances.set(id, {
      id,
      machine_id: offer.machine_id,
      host_id: offer.host_id,
      actual_status: "loading",
      intended_status: "running",
      cur_state: "running",
      next_state: "running",
      label: body.label ?? null,
      status_msg: "pulling image",
      gpu_name: offer.gpu_name,
      num_gpus: offer.num_gpus,
      dph_total: offer.dph_total,
      storage_total_cost: offer.storage_total_cost,
      disk_space: body.disk ?? 10,
      disk_usage: 0,
      gpu_util: null,
      reliability2: offer.reliability2,
      image_uuid: body.image ?? null,
      image_runtype: body.runtype ?? null,
      extra_env: Object.entries(env),
      onstart: body.onstart ?? null,
      template_hash_id: body.template_hash_id ?? null,
      start_date: Date.now() / 1000,
      end_date: null,
      is_bid: false,
    });
    this.created.push(id);
    return ok({ success: true, new_contract: id });
  }

  /** The created instance's container is up: `loading` becomes `running`. */
  boot(id: number): void {
    const row = this.instances.get(id);
    if (!row) throw new Error(`the fake has no instance ${id}`);
    Object.assign(row, { actual_status: "running", status_msg: `success, running ${String(row.image_uuid ?? "template")}` });
  }
}
