/**
 * The RunPod provider: its GraphQL API as runpod-python calls it (runpod/runpod-python 07fc6e2b,
 * runpod/api/graphql.py `run_graphql_query`): one POST to the endpoint (RUNPOD_URL, default
 * https://api.runpod.io/graphql) with `{"query": …}` and the key as `Authorization: Bearer` (the
 * `?api_key=` query parameter was dropped in runpod-python #394); a 401 is a bad key; an answer
 * with an `errors` array is a failure even with status 200 (RunPod answers client errors with 200:
 * dstack's src/dstack/_internal/core/backends/runpod/api_client.py `_make_request`). Values travel
 * as GraphQL variables, never spliced into the query text.
 *
 * Capabilities, from the operations runpod-python has (runpod/api/mutations/pods.py): start
 * (`podResume`, which needs the pod's GPU count), stop (`podStop`), destroy (`podTerminate`),
 * create (`podFindAndDeployOnDemand`) and telemetry (runtime GPU utilisation). No reboot, label or
 * logs: runpod-python has no mutation for them. Offers come from `gpuTypes` with `lowestPrice`
 * (runpod/api/queries/gpus.py): one per GPU type, priced at its on-demand `uninterruptablePrice`
 * per GPU times the count; RunPod picks the machine at deploy time, so an offer names none and
 * `excludeMachineIds` cannot be honoured, and RunPod has no reliability score to filter on.
 *
 * Reads retry 429/502-504 and network failures (bounded); stop, resume and terminate retry only a
 * 429; a deploy is sent once. Pod listing has no paging: `myself { pods }` is the whole fleet.
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
import { MY_BALANCE, runpodBalance } from "./account-balance.ts";
import {
  DEPLOY_POD,
  deployed,
  GET_POD,
  GPU_TYPES,
  gpuTypes,
  graphqlAnswer,
  isTerminated,
  LIST_PODS,
  podList,
  podShow,
  podToInstance,
  RESUME_POD,
  STOP_POD,
  TERMINATE_POD,
} from "./runpod-pod.ts";

export interface RunpodOptions extends HttpOptions {
  apiKey: string;
  /** The GraphQL endpoint (RUNPOD_URL). */
  url: string;
  /** ms epoch, for a running pod's start time from its uptime. */
  now?: () => number;
}

export const RUNPOD_USER_AGENT = "fleetwarden/0.1 (+runpod provider)";
const NAME = "RunPod";

export class RunpodProvider implements FleetProvider {
  readonly kind = "runpod" as const;
  readonly capabilities: ReadonlySet<Capability> = new Set<Capability>(["start", "stop", "destroy", "create", "telemetry"]);

  constructor(private readonly options: RunpodOptions) {}

  async list(): Promise<FleetInstance[]> {
    const data = parseAnswer(NAME, podList, await this.graphql("query myPods", LIST_PODS, {}, "reads"), "pod list");
    const now = this.now();
    return data.myself.pods.filter((pod) => !isTerminated(pod)).map((pod) => podToInstance(pod, now));
  }

  async get(id: string): Promise<FleetInstance | null> {
    if (!isPodId(id)) return null;
    const data = parseAnswer(NAME, podShow, await this.graphql("query pod", GET_POD, { input: { podId: id } }, "reads"), `pod ${id}`);
    return data.pod && !isTerminated(data.pod) ? podToInstance(data.pod, this.now()) : null;
  }

  /** podResume needs the GPU count to attach: read from the pod itself. */
  async start(id: string, call: ProviderCall = {}): Promise<void> {
    const pod = await this.get(requireId(id));
    if (!pod) throw new ProviderError(`no such RunPod pod: ${id}`, 404);
    await this.graphql("mutation podResume", RESUME_POD, { input: { podId: id, gpuCount: pod.gpuCount ?? 1 } }, "refusals", call.signal);
  }

  async stop(id: string, call: ProviderCall = {}): Promise<void> {
    await this.graphql("mutation podStop", STOP_POD, { input: { podId: requireId(id) } }, "refusals", call.signal);
  }

  async destroy(id: string, call: ProviderCall = {}): Promise<void> {
    await this.graphql("mutation podTerminate", TERMINATE_POD, { input: { podId: requireId(id) } }, "refusals", call.signal);
  }

  async reboot(): Promise<void> {
    throw unsupported(this.kind, "reboot");
  }
  async setLabel(): Promise<void> {
    throw unsupported(this.kind, "label");
  }
  async logs(): Promise<InstanceLogs> {
    throw unsupported(this.kind, "logs");
  }

  async offers(query: OfferQuery, call: ProviderCall = {}): Promise<Offer[]> {
    const answer = await this.graphql("query GpuTypes", GPU_TYPES, { lowest: { gpuCount: query.gpuCount } }, "reads", call.signal);
    const wanted = query.gpuName.toLowerCase();
    const offers = parseAnswer(NAME, gpuTypes, answer, "GPU type list")
      .gpuTypes.filter((t) => t.id.toLowerCase() === wanted || t.displayName.toLowerCase() === wanted)
      .flatMap((t): Offer[] => {
        const perGpu = t.lowestPrice?.uninterruptablePrice;
        if (typeof perGpu !== "number") return [];
        return [
          {
            id: t.id,
            machineId: null,
            gpuName: t.displayName,
            gpuCount: query.gpuCount,
            pricePerHour: perGpu * query.gpuCount,
            diskGb: null,
            reliability: null,
          },
        ];
      });
    return cheapestWithin(offers, query);
  }

  /** podFindAndDeployOnDemand with the input fields runpod-python sends; sent once, never repeated. */
  async create(offer: Offer, spec: InstanceSpec, call: ProviderCall = {}): Promise<CreatedInstance> {
    if (!spec.image) throw new ProviderError("RunPod needs an image to deploy a pod (the spec has none)", 400);
    const input = {
      name: spec.label ?? "fleetwarden",
      imageName: spec.image,
      cloudType: "ALL",
      gpuTypeId: offer.id,
      gpuCount: offer.gpuCount,
      supportPublicIp: true,
      startSsh: true,
      dataCenterId: null,
      ...(spec.diskGb !== null ? { containerDiskInGb: spec.diskGb } : {}),
      ...(spec.onstart ? { dockerArgs: spec.onstart } : {}),
      ...(spec.templateId ? { templateId: spec.templateId } : {}),
      // The old pod's ports and volume, as runpod-python's create_pod sends them (runpod/runpod-python
      // c7622afa, runpod/api/mutations/pods.py generate_pod_deployment_mutation: ports without spaces).
      ...(spec.ports ? { ports: spec.ports.replace(/\s/g, "") } : {}),
      ...(typeof spec.volumeGb === "number" ? { volumeInGb: spec.volumeGb } : {}),
      ...(spec.volumeMountPath ? { volumeMountPath: spec.volumeMountPath } : {}),
      env: Object.entries(spec.env).map(([key, value]) => ({ key, value })),
    };
    try {
      const answer = await this.graphql("mutation podFindAndDeployOnDemand", DEPLOY_POD, { input }, "never", call.signal);
      return { id: parseAnswer(NAME, deployed, answer, "deploy answer").podFindAndDeployOnDemand.id };
    } catch (err) {
      // A 2xx that does not parse (or has neither data nor errors) may still have deployed: never repeated.
      throw err instanceof ProviderError ? onceOnly("never", err) : err;
    }
  }

  /** `myself { clientBalance }`: the account's balance in USD (fleet/providers/account-balance.ts). */
  async balance(call: ProviderCall = {}): Promise<number> {
    const answer = await this.graphql("query myBalance", MY_BALANCE, {}, "reads", call.signal);
    return parseAnswer(NAME, runpodBalance, answer, "balance").myself.clientBalance;
  }

  /** The `data` of a GraphQL answer; its `errors` (even with 200) are a ProviderError. */
  private async graphql(
    what: string,
    query: string,
    variables: Record<string, unknown>,
    retry: RetryPolicy,
    signal?: AbortSignal,
  ): Promise<unknown> {
    const { json } = await callJson(this.options, {
      provider: NAME,
      method: "POST",
      url: this.options.url,
      what,
      headers: { Authorization: `Bearer ${this.options.apiKey}`, "User-Agent": RUNPOD_USER_AGENT },
      body: { query, variables },
      retry,
      signal,
      errorText: (body) => firstError(body),
    });
    const answer = parseAnswer(NAME, graphqlAnswer, json, `answer to ${what}`);
    if (answer.errors?.length) {
      const message = answer.errors[0]!.message;
      throw new ProviderError(`RunPod refused ${what}: ${message}`, /not found/i.test(message) ? 404 : 400);
    }
    if (answer.data === undefined || answer.data === null)
      throw new ProviderError(`RunPod answered ${what} with neither data nor errors`, 502, true);
    return answer.data;
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }
}

function firstError(body: unknown): string | null {
  const parsed = graphqlAnswer.safeParse(body);
  return parsed.success && parsed.data.errors?.length ? parsed.data.errors[0]!.message : null;
}

/** RunPod pod ids are short lowercase alphanumerics ("ab12cd34ef56gh"). */
function isPodId(id: string): boolean {
  return /^[a-z0-9]{6,32}$/.test(id);
}

function requireId(id: string): string {
  if (!isPodId(id)) throw new ProviderError(`no such RunPod pod: ${id} (ids are lowercase letters and digits)`, 404);
  return id;
}
