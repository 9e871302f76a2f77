/**
 * The Lambda Cloud provider, as dstack's and SkyPilot's clients call it (dstackai/dstack 511c318c,
 * src/dstack/_internal/core/backends/lambdalabs/api_client.py; skypilot-org/skypilot 0c059089,
 * sky/provision/lambda_cloud/lambda_utils.py): `Authorization: Bearer <key>` on the API base
 * (LAMBDA_URL, default https://cloud.lambdalabs.com/api/v1); `GET /instances`, `GET
 * /instances/{id}`, `POST /instance-operations/launch | restart | terminate` with `instance_ids`,
 * `GET /instance-types` for offers and `GET /ssh-keys` for the key a launch must name.
 *
 * Capabilities: reboot (restart), destroy (terminate) and create (launch). Lambda has no stop or
 * start (an instance only runs or is terminated), no labels, logs or GPU utilisation.
 *
 * Rate limits: SkyPilot, citing Lambda's docs, says most requests are limited to about one a
 * second and launches to about one every ten seconds, answered 429. Reads retry a 429 (and
 * 502-504, network failures) a bounded number of times; restart and terminate retry only a 429
 * (refused before acting); a launch is sent once: its 429 is a retryable ProviderError for the
 * caller's own schedule, and a 5xx or lost answer is not retryable (it may have been accepted).
 * The instance list has no paging.
 */
import {
  cheapestWithin,
  ProviderError,
  unsupported,
  type Capability,
  type CreatedInstance,
  type FleetInstance,
  type FleetProvider,
  type InstanceLogs,
  type InstanceSpec,
  type Offer,
  type OfferQuery,
  type ProviderCall,
} from "./provider.ts";
import { callJson, onceOnly, parseAnswer, type HttpOptions, type RetryPolicy } from "./provider-http.ts";
import {
  acted,
  gpuNameOf,
  instanceList,
  instanceShow,
  instanceTypes,
  isGone,
  lambdaErrorText,
  lambdaToInstance,
  launched,
  sshKeys,
} from "./lambda-instance.ts";

export interface LambdaOptions extends HttpOptions {
  apiKey: string;
  /** The API base (LAMBDA_URL). */
  baseUrl: string;
}

const NAME = "Lambda Cloud";
/** Lambda's launch names an instance with at most this many characters (dstack MAX_INSTANCE_NAME_LEN). */
export const MAX_NAME = 60;

export class LambdaProvider implements FleetProvider {
  readonly kind = "lambda" as const;
  readonly capabilities: ReadonlySet<Capability> = new Set<Capability>(["reboot", "destroy", "create"]);
  private readonly base: string;

  constructor(private readonly options: LambdaOptions) {
    this.base = options.baseUrl.replace(/\/+$/, "");
  }

  async list(): Promise<FleetInstance[]> {
    const answer = parseAnswer(NAME, instanceList, await this.call("GET", "/instances", undefined, "reads"), "instance list");
    return answer.data.filter((i) => !isGone(i)).map(lambdaToInstance);
  }

  async get(id: string): Promise<FleetInstance | null> {
    if (!isLambdaId(id)) return null;
    try {
      const shown = parseAnswer(NAME, instanceShow, await this.call("GET", `/instances/${id}`, undefined, "reads"), `instance ${id}`).data;
      return isGone(shown) ? null : lambdaToInstance(shown);
    } catch (err) {
      if (err instanceof ProviderError && err.status === 404) return null;
      throw err;
    }
  }

  async reboot(id: string, call: ProviderCall = {}): Promise<void> {
    await this.operate("restart", id, call);
  }

  async destroy(id: string, call: ProviderCall = {}): Promise<void> {
    await this.operate("terminate", id, call);
  }

  async start(): Promise<void> {
    throw unsupported(this.kind, "start");
  }
  async stop(): Promise<void> {
    throw unsupported(this.kind, "stop");
  }
  async setLabel(): Promise<void> {
    throw unsupported(this.kind, "label");
  }
  async logs(): Promise<InstanceLogs> {
    throw unsupported(this.kind, "logs");
  }

  /** One offer per instance type and region with capacity, matching GPU model and count. */
  async offers(query: OfferQuery, call: ProviderCall = {}): Promise<Offer[]> {
    const types = parseAnswer(
      NAME,
      instanceTypes,
      await this.call("GET", "/instance-types", undefined, "reads", call.signal),
      "instance type list",
    ).data;
    const wanted = query.gpuName.toLowerCase();
    const offers = Object.values(types)
      .filter(({ instance_type: t }) => gpuNameOf(t).toLowerCase() === wanted && (t.specs?.gpus ?? null) === query.gpuCount)
      .filter(({ instance_type: t }) => query.minDiskGb === null || (t.specs?.storage_gib ?? 0) >= query.minDiskGb)
      .flatMap(({ instance_type: t, regions_with_capacity_available: regions }) =>
        regions.map(
          (r): Offer => ({
            id: `${t.name}@${r.name}`,
            machineId: null,
            gpuName: gpuNameOf(t),
            gpuCount: t.specs?.gpus ?? query.gpuCount,
            pricePerHour: t.price_cents_per_hour / 100,
            diskGb: t.specs?.storage_gib ?? null,
            reliability: null,
          }),
        ),
      );
    return cheapestWithin(offers, query);
  }

  /**
   * Launches one instance of the offer's type in its region; sent once. The SSH key and file
   * systems are the old instance's (spec.launch, stored when it was first seen), else the
   * account's first key and none. File systems belong to a region (Lambda refuses
   * `file-system-in-wrong-region`), so they go along only when the offer is in the old region.
   */
  async create(offer: Offer, spec: InstanceSpec, call: ProviderCall = {}): Promise<CreatedInstance> {
    const at = offer.id.lastIndexOf("@");
    if (at <= 0) throw new ProviderError(`not a Lambda Cloud offer id: ${offer.id} (type@region)`, 400);
    const region = offer.id.slice(at + 1);
    const launch = spec.launch ?? null;
    let key = launch?.sshKeyNames[0];
    if (!key) {
      const keys = parseAnswer(NAME, sshKeys, await this.call("GET", "/ssh-keys", undefined, "reads", call.signal), "SSH key list").data;
      if (!keys.length) throw new ProviderError("Lambda Cloud cannot launch: the account has no SSH key (a launch must name one)", 400);
      key = keys[0]!.name;
    }
    const body = {
      region_name: region,
      instance_type_name: offer.id.slice(0, at),
      // Lambda takes exactly one key per launch.
      ssh_key_names: [key],
      file_system_names: launch && launch.region === region ? launch.fileSystemNames : [],
      quantity: 1,
      name: (spec.label ?? "fleetwarden").slice(0, MAX_NAME),
    };
    const sent = await this.call("POST", "/instance-operations/launch", body, "never", call.signal);
    try {
      return { id: parseAnswer(NAME, launched, sent, "launch answer").data.instance_ids[0]! };
    } catch (err) {
      // A 2xx that does not parse may still have launched: maybe rented, never for a caller to repeat.
      throw err instanceof ProviderError ? onceOnly("never", err) : err;
    }
  }

  private async operate(operation: "restart" | "terminate", id: string, call: ProviderCall): Promise<void> {
    if (!isLambdaId(id)) throw new ProviderError(`no such Lambda Cloud instance: ${id} (ids are 32 hex digits)`, 404);
    parseAnswer(
      NAME,
      acted,
      await this.call("POST", `/instance-operations/${operation}`, { instance_ids: [id] }, "refusals", call.signal),
      `${operation} answer`,
    );
  }

  private async call(method: string, path: string, body: unknown, retry: RetryPolicy, signal?: AbortSignal): Promise<unknown> {
    const { json } = await callJson(this.options, {
      provider: NAME,
      method,
      url: `${this.base}${path}`,
      what: `${method} ${path}`,
      headers: { Authorization: `Bearer ${this.options.apiKey}` },
      body,
      retry,
      signal,
      errorText: lambdaErrorText,
    });
    return json;
  }
}

/** Lambda instance ids are 32 lowercase hex digits ("0920582c7ff041399e34823a0be62549"). */
function isLambdaId(id: string): boolean {
  return /^[0-9a-f]{32}$/.test(id);
}
