/**
 * The QStash scheduler (Workers, or Node with SCHEDULER=qstash): the scheduler contract carried
 * by Upstash. Each publish becomes one QStash message to `PUBLIC_URL/internal/deliveries` with
 * `notBefore` (delay), `deduplicationId` (the dedup key; QStash keeps it 10 minutes), `retries`
 * (QStash backs off exponentially between them) and flow control with parallelism 1, so QStash
 * itself never runs two deliveries of one key at once (defence in depth: the lease row is the
 * guard). Flow-control keys are per agent — `<prefix>-agent-<id>` for runs and wakes,
 * `<prefix>-notify-<id>` for its notifications — and they and every deduplication id carry a
 * deployment prefix (QSTASH_FLOW_PREFIX, default a short hash of PUBLIC_URL), because QStash
 * applies limits per key and remembers deduplication ids across every deployment sharing one
 * token: staging must not serialise production, and a fresh database's `run:default:1` must not
 * be taken for another deployment's. Several messages at once (the tick fan-out) go to QStash's
 * batch endpoint, one request per 100.
 */
import { Client } from "@upstash/qstash";
import { ConfigError, type Config } from "../runtime/config.ts";
import type { DeliveryBody, PublishRequest, Scheduler } from "./scheduler.ts";

export const DELIVERIES_PATH = "/internal/deliveries";

/**
 * Messages per request to QStash's batch endpoint (`POST /v2/batch`). Upstash documents no maximum;
 * 100 keeps one request's body far below its 1 MB message limit and a tick fan-out of 100 agents
 * in one subrequest.
 */
export const QSTASH_BATCH_SIZE = 100;

export interface QStashSchedulerOptions {
  token: string;
  /** Where the deployment is reachable; QStash delivers to `${publicUrl}/internal/deliveries`. */
  publicUrl: string;
  /** QStash API base URL; unset means Upstash's default (tests point it at a local server). */
  baseUrl?: string;
  /** How many times QStash retries a delivery that did not answer 2xx. */
  retries: number;
  /** Prefix of every flow-control key and deduplication id (one per deployment sharing a QStash token). */
  flowPrefix: string;
}

/** The URL QStash delivers to, which is also the `sub` claim its signatures carry. */
export function deliveriesUrl(publicUrl: string): string {
  return `${publicUrl.replace(/\/+$/, "")}${DELIVERIES_PATH}`;
}

const SAFE = /[A-Za-z0-9-]/;
const MAX_ID_LENGTH = 100;

/**
 * Makes a key safe for QStash's deduplication id and flow-control key headers: letters, digits
 * and `-` are kept, every other byte becomes `_xx` (hex). The mapping is one-to-one, so distinct
 * keys never collide; an over-long result is replaced by its SHA-256 (still one-to-one in
 * practice).
 */
export async function toQStashId(key: string): Promise<string> {
  let id = "";
  for (const char of key) {
    if (SAFE.test(char)) id += char;
    else for (const byte of new TextEncoder().encode(char)) id += `_${byte.toString(16).padStart(2, "0")}`;
  }
  if (id.length <= MAX_ID_LENGTH) return id;
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key));
  return `h-${[...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/**
 * Runs and wakes of one agent share a flow-control key; its notifications have their own, so one
 * agent's alert backlog never holds up another's (or its runs). A Slack click's decision has its
 * own too, so a human's click never waits behind a run.
 */
export function flowControlKeyOf(prefix: string, body: DeliveryBody): string {
  if (body.type === "slack-decision") return `${prefix}-slack-${body.agentId}`;
  return body.type === "notify" ? `${prefix}-notify-${body.agentId}` : `${prefix}-agent-${body.agentId}`;
}

/**
 * The deduplication id QStash sees for a dedup key: the deployment's prefix and the key. The
 * prefix has no `:`, so its end is unambiguous once toQStashId has escaped the separator.
 */
export function deduplicationIdOf(prefix: string, dedupKey: string): Promise<string> {
  return toQStashId(`${prefix}:${dedupKey}`);
}

/**
 * The default flow-control prefix: 8 hex digits of FNV-1a over the public URL. Synchronous and
 * host-neutral; distinct deployments (distinct URLs) get distinct prefixes in practice.
 */
export function defaultFlowPrefix(publicUrl: string): string {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(publicUrl.replace(/\/+$/, ""))) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, "0");
}

export class QStashScheduler implements Scheduler {
  readonly kind = "qstash" as const;
  private readonly client: Client;
  private readonly destination: string;

  constructor(private readonly options: QStashSchedulerOptions) {
    this.client = new Client({
      token: options.token,
      baseUrl: options.baseUrl,
      // Never let QSTASH_DEV in a process environment swap in the SDK's downloaded dev server.
      devMode: false,
      enableTelemetry: false,
      // Network failures reaching QStash are retried briefly; a QStash error answer is not.
      retry: { retries: 3, backoff: (attempt) => 100 * 2 ** attempt },
    });
    this.destination = deliveriesUrl(options.publicUrl);
  }

  async publish(request: PublishRequest): Promise<void> {
    await this.client.publishJSON(await this.message(request));
  }

  /**
   * One request to QStash's batch endpoint per QSTASH_BATCH_SIZE messages. QStash sends the
   * valid messages of a batch even when one fails; the failures are thrown together afterwards.
   */
  async publishMany(requests: readonly PublishRequest[]): Promise<void> {
    const failures: string[] = [];
    for (let start = 0; start < requests.length; start += QSTASH_BATCH_SIZE) {
      const chunk = requests.slice(start, start + QSTASH_BATCH_SIZE);
      const answers: unknown[] = await this.client.batchJSON(await Promise.all(chunk.map((request) => this.message(request))));
      answers.forEach((answer, i) => {
        const error = (answer as { error?: unknown } | null)?.error;
        if (error !== undefined) failures.push(`${chunk[i]!.dedupKey}: ${String(error)}`);
      });
    }
    if (failures.length)
      throw new Error(`QStash refused ${failures.length} of ${requests.length} batched messages: ${failures.join("; ")}`);
  }

  private async message(request: PublishRequest) {
    return {
      url: this.destination,
      body: request.body,
      // QStash takes seconds; rounding up keeps "no earlier than notBefore".
      notBefore: Math.ceil(request.notBefore / 1000),
      deduplicationId: await deduplicationIdOf(this.options.flowPrefix, request.dedupKey),
      retries: this.options.retries,
      flowControl: { key: await toQStashId(flowControlKeyOf(this.options.flowPrefix, request.body)), parallelism: 1 },
    };
  }
}

/** The QStash scheduler a host's configuration describes (parseConfig already required its parts). */
export function qstashSchedulerFromConfig(config: Config): QStashScheduler {
  if (!config.qstash.token) throw new ConfigError("QSTASH_TOKEN", "is required when the scheduler is qstash");
  if (!config.publicUrl) throw new ConfigError("PUBLIC_URL", "is required when the scheduler is qstash");
  return new QStashScheduler({
    token: config.qstash.token,
    publicUrl: config.publicUrl,
    baseUrl: config.qstash.url,
    retries: config.qstash.retries,
    flowPrefix: config.qstash.flowPrefix ?? defaultFlowPrefix(config.publicUrl),
  });
}
