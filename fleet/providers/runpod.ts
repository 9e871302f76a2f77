/**
 * The RunPod provider, on RunPod's REST API where it covers what fleetwarden does
 * (https://docs.runpod.io/api-reference, OpenAPI servers `https://rest.runpod.io/v1`, every call
 * with `Authorization: Bearer <key>`): list `GET /pods`, get `GET /pods/{podId}` (404: gone),
 * start `POST /pods/{podId}/start`, stop `POST /pods/{podId}/stop`, terminate `DELETE
 * /pods/{podId}` and create `POST /pods` (gpuTypeIds, gpuCount, imageName, containerDiskInGb,
 * volumeInGb, volumeMountPath, ports, env, dockerStartCmd, templateId). REST answers failures with
 * their HTTP status (400 bad input or pod id, 401 bad key, 404 no such pod on a get, 429, 5xx); the
 * error text is read from `{"error": …}` when RunPod sends one (runpod/docs api-reference/openapi.json
 * at a900806e documents the codes, not the body; its paths have no GPU types, prices or balance).
 *
 * GraphQL (RUNPOD_URL, default https://api.runpod.io/graphql; runpod/runpod-python 07fc6e2b,
 * runpod/api/graphql.py: POST `{"query", "variables"}` with the same Bearer key; `errors` even with
 * a 200 is a failure) is kept only for what REST does not answer:
 * - a pod's runtime (`runtime { uptimeInSeconds gpus { gpuUtilPercent } }`): REST's Pod has no
 *   utilisation and no sign that the image has been pulled, so `loading` vs `running`, uptime and
 *   telemetry come from one GraphQL read beside each REST list/get;
 * - offers: the GPU catalogue with prices (`gpuTypes { lowestPrice(input: {gpuCount}) }`,
 *   runpod/api/queries/gpus.py); REST has no GPU type or price endpoint;
 * - the balance (`myself { clientBalance }`); REST's billing endpoints give history, not credit.
 * The REST base is RunPod's own (https://rest.runpod.io/v1) when RUNPOD_URL is RunPod's GraphQL
 * host, else RUNPOD_URL with its `/graphql` made `/v1` (a stand-in or proxy serving both), so the
 * key still goes only to RunPod's hosts or to the origin it was given for.
 *
 * Capabilities: start, stop, destroy, create and telemetry. No reboot, label or logs (RunPod's
 * REST `restart` is documented but reported not to restart: runpod/runpod-python#450). Offers: one
 * per GPU type, priced at its on-demand `uninterruptablePrice` per GPU times the count; RunPod
 * picks the machine at create time, so an offer names none, `excludeMachineIds` cannot be
 * honoured, and RunPod has no reliability score. A create is in RunPod's default cloud (SECURE):
 * REST has no "ALL" cloud type; so offers are priced for the Secure Cloud (`secureCloud: true`),
 * the cloud the pod is created in, never a cheaper Community price it would not get.
 *
 * Reads retry 429/502-504 and network failures (bounded); start, stop and terminate retry only a
 * 429 (they answer 200 with no content; an unknown pod is RunPod's 400 "Invalid Pod ID", a get's a
 * 404, read as gone); a create is sent once. Pod listing
 * has no paging: `GET /pods` is the whole fleet.
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
  fromRest,
  GET_RUNTIME,
  GPU_TYPES,
  gpuTypes,
  graphqlAnswer,
  isTerminated,
  LIST_RUNTIMES,
  podToInstance,
  restCreated,
  restError,
  restPod,
  restPodList,
  runtimeList,
  runtimeShow,
  startCommand,
} from "./runpod-pod.ts";

export interface RunpodOptions extends HttpOptions {
  apiKey: string;
  /** The GraphQL endpoint (RUNPOD_URL). */
  url: string;
  /** The REST base; by default derived from `url` (restBaseFor). */
  restUrl?: string;
  /** ms epoch, for a running pod's start time from its uptime. */
  now?: () => number;
}

export const RUNPOD_USER_AGENT = "fleetwarden/0.1 (+runpod provider)";
const NAME = "RunPod";
/** RunPod's words for a create that found no machine (runpod/runpodctl#189): nothing was rented. */
const NO_CAPACITY = /no longer any instances available/i;

export class RunpodProvider implements FleetProvider {
  readonly kind = "runpod" as const;
  readonly capabilities: ReadonlySet<Capability> = new Set<Capability>(["start", "stop", "destroy", "create", "telemetry"]);

  constructor(private readonly options: RunpodOptions) {}

  async list(): Promise<FleetInstance[]> {
    const { json } = await this.rest("GET", "/pods", "reads");
    const pods = parseAnswer(NAME, restPodList, json, "pod list").filter((pod) => !isTerminated(pod));
    if (!pods.length) return [];
    const runtimes = parseAnswer(NAME, runtimeList, await this.graphql("query podRuntimes", LIST_RUNTIMES, {}, "reads"), "pod runtimes");
    const byId = new Map(runtimes.myself.pods.map((p) => [p.id, p.runtime ?? null]));
    const now = this.now();
    return pods.map((pod) => podToInstance(fromRest(pod, byId.get(pod.id) ?? null), now));
  }

  async get(id: string): Promise<FleetInstance | null> {
    if (!isPodId(id)) return null;
    const answer = await this.rest("GET", `/pods/${id}`, "reads", undefined, undefined, { goneIsAnswer: true });
    if (answer.status === 404) return null;
    const pod = parseAnswer(NAME, restPod, answer.json, `pod ${id}`);
    if (isTerminated(pod)) return null;
    const runtime = parseAnswer(
      NAME,
      runtimeShow,
      await this.graphql("query podRuntime", GET_RUNTIME, { input: { podId: id } }, "reads"),
      `pod ${id} runtime`,
    );
    return podToInstance(fromRest(pod, runtime.pod?.runtime ?? null), this.now());
  }

  async start(id: string, call: ProviderCall = {}): Promise<void> {
    await this.rest("POST", `/pods/${requireId(id)}/start`, "refusals", undefined, call.signal, { emptyIsOk: true });
  }

  async stop(id: string, call: ProviderCall = {}): Promise<void> {
    await this.rest("POST", `/pods/${requireId(id)}/stop`, "refusals", undefined, call.signal, { emptyIsOk: true });
  }

  async destroy(id: string, call: ProviderCall = {}): Promise<void> {
    await this.rest("DELETE", `/pods/${requireId(id)}`, "refusals", undefined, call.signal, { emptyIsOk: true });
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
    const answer = await this.graphql(
      "query GpuTypes",
      GPU_TYPES,
      { lowest: { gpuCount: query.gpuCount, secureCloud: true } },
      "reads",
      call.signal,
    );
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

  /** `POST /pods` with the fields of RunPod's PodCreateInput; sent once, never repeated. */
  async create(offer: Offer, spec: InstanceSpec, call: ProviderCall = {}): Promise<CreatedInstance> {
    if (!spec.image) throw new ProviderError("RunPod needs an image to deploy a pod (the spec has none)", 400);
    const body = {
      name: spec.label ?? "fleetwarden",
      imageName: spec.image,
      computeType: "GPU",
      gpuTypeIds: [offer.id],
      gpuCount: offer.gpuCount,
      supportPublicIp: true,
      ...(spec.diskGb !== null ? { containerDiskInGb: spec.diskGb } : {}),
      ...(spec.onstart ? { dockerStartCmd: startCommand(spec.onstart) } : {}),
      ...(spec.templateId ? { templateId: spec.templateId } : {}),
      // The old pod's ports and volume, kept by a replacement: REST takes ports as a list.
      ...(spec.ports
        ? {
            ports: spec.ports
              .split(",")
              .map((p) => p.trim())
              .filter(Boolean),
          }
        : {}),
      ...(typeof spec.volumeGb === "number" ? { volumeInGb: spec.volumeGb } : {}),
      ...(spec.volumeMountPath ? { volumeMountPath: spec.volumeMountPath } : {}),
      env: spec.env,
    };
    try {
      const { json } = await this.rest("POST", "/pods", "never", body, call.signal);
      return { id: parseAnswer(NAME, restCreated, json, "create answer").id };
    } catch (err) {
      if (!(err instanceof ProviderError)) throw err;
      // RunPod's own "no longer any instances available" is nothing rented, even answered as a 5xx.
      if (err.status !== null && err.status >= 500 && NO_CAPACITY.test(err.message))
        throw new ProviderError(`${err.message} (nothing was rented)`, 409);
      // A 2xx that does not parse, or another 5xx, may still have created a pod: never repeated.
      throw onceOnly("never", err);
    }
  }

  /** `myself { clientBalance }`: the account's balance in USD (fleet/providers/account-balance.ts). */
  async balance(call: ProviderCall = {}): Promise<number> {
    const answer = await this.graphql("query myBalance", MY_BALANCE, {}, "reads", call.signal);
    return parseAnswer(NAME, runpodBalance, answer, "balance").myself.clientBalance;
  }

  /**
   * One REST call to RunPod. `goneIsAnswer`: a 404 is returned, not thrown; `emptyIsOk`: a 200
   * without content is success (start, stop and delete document none).
   */
  private async rest(
    method: string,
    path: string,
    retry: RetryPolicy,
    body?: unknown,
    signal?: AbortSignal,
    { goneIsAnswer = false, emptyIsOk = false } = {},
  ) {
    try {
      return await callJson(this.options, {
        provider: NAME,
        method,
        url: `${this.restBase()}${path}`,
        what: `${method} ${path.replace(/^\/pods\/[^/]+/, "/pods/{podId}")}`,
        headers: { Authorization: `Bearer ${this.options.apiKey}`, "User-Agent": RUNPOD_USER_AGENT },
        body,
        retry,
        signal,
        errorText: (json) => {
          const parsed = restError.safeParse(json);
          return parsed.success ? parsed.data.error : null;
        },
        emptyIsOk,
      });
    } catch (err) {
      if (goneIsAnswer && err instanceof ProviderError && err.status === 404) return { status: 404, json: null };
      throw err;
    }
  }

  private restBase(): string {
    return (this.options.restUrl ?? restBaseFor(this.options.url)).replace(/\/+$/, "");
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

/** RunPod's REST base for a GraphQL endpoint: RunPod's own for api.runpod.io, else the URL with `/graphql` made `/v1`. */
export function restBaseFor(graphqlUrl: string): string {
  const url = new URL(graphqlUrl);
  if (url.hostname === "api.runpod.io") return "https://rest.runpod.io/v1";
  return `${url.origin}${url.pathname.replace(/\/graphql\/?$/, "").replace(/\/+$/, "")}/v1`;
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
