/**
 * The OTLP exporter of the tracer port (runtime/trace.ts): each run's spans are kept in memory
 * while it runs and sent when it finishes, in one OTLP/HTTP request with the JSON encoding
 * (`POST <endpoint>/v1/traces`, `Content-Type: application/json`), through `fetch`, so the Node host
 * and the Worker export alike with no SDK.
 *
 * The payload is an ExportTraceServiceRequest as opentelemetry-proto defines it
 * (opentelemetry/proto/trace/v1/trace.proto and collector/trace/v1/trace_service.proto, commit
 * 5cb53996db83838a8ce19ec7cf49b8f37b456d4f) in its JSON mapping (docs/specification.md "JSON Protobuf
 * Encoding" and "OTLP/HTTP Request", commit d3b7479dd9085f8b761ab41cd0b204975d2b8138): lowerCamelCase
 * field names, traceId/spanId as hex strings (not base64), enums as integers, 64-bit integers
 * (the nanosecond times, integer attributes) as decimal strings.
 *
 * Bounds: at most MAX_OPEN_RUNS runs are traced at once (a run past it is not traced) and at most
 * MAX_SPANS_PER_RUN spans kept per run (the rest counted on the run's span as dropped); one
 * request per run, never retried, abandoned after EXPORT_TIMEOUT_MS. A failed export drops the
 * spans and is logged once, until an export succeeds again: a collector that is down or slow
 * never slows or fails a run, and never floods the log.
 */
import type { Clock } from "./clock.ts";
import type { Logger } from "./log.ts";
import { noopSpan, noopTracer, type Attributes, type AttributeValue, type RunKey, type Span, type SpanKind, type Tracer } from "./trace.ts";

export const MAX_SPANS_PER_RUN = 200;
export const MAX_OPEN_RUNS = 1000;
export const EXPORT_TIMEOUT_MS = 2000;
/** A string attribute longer than this is cut (message content can be long). */
export const MAX_ATTRIBUTE_CHARS = 32_000;
const MAX_EVENTS_PER_SPAN = 32;

export interface OtlpOptions {
  /** OTEL_EXPORTER_OTLP_ENDPOINT: the collector's base URL; `/v1/traces` is appended. */
  endpoint: string;
  /** OTEL_EXPORTER_OTLP_HEADERS, parsed (parseOtlpHeaders). */
  headers?: Record<string, string>;
  serviceName: string;
  captureContent: boolean;
  /** Tests may shorten it; EXPORT_TIMEOUT_MS otherwise. */
  timeoutMs?: number;
}

/**
 * OTEL_EXPORTER_OTLP_HEADERS: `key=value` pairs separated by commas, values percent-decoded, as the
 * SDK environment variable specification defines it; null names the problem-free parse's failure.
 */
export function parseOtlpHeaders(text: string): Record<string, string> | null {
  const headers: Record<string, string> = {};
  for (const pair of text.split(",")) {
    if (pair.trim() === "") continue;
    const at = pair.indexOf("=");
    if (at <= 0) return null;
    const key = pair.slice(0, at).trim();
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(key)) return null;
    let value: string;
    try {
      value = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      return null;
    }
    if (/[\r\n]/.test(value)) return null;
    headers[key] = value;
  }
  return headers;
}

/** `<endpoint>/v1/traces`, with exactly one slash between them. */
export function tracesUrl(endpoint: string): string {
  return `${endpoint.replace(/\/+$/, "")}/v1/traces`;
}

const SPAN_KIND: Record<SpanKind, number> = { internal: 1, client: 3 };
const STATUS_OK = 1;
const STATUS_ERROR = 2;

interface SpanEvent {
  name: string;
  at: number;
  attributes: Attributes;
}

interface SpanRecord {
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: SpanKind;
  start: number;
  end: number | null;
  attributes: Attributes;
  events: SpanEvent[];
  error: string | null | undefined;
}

interface RunTrace {
  traceId: string;
  root: SpanRecord;
  spans: SpanRecord[];
  dropped: number;
}

function randomHex(bytes: number): string {
  const buffer = crypto.getRandomValues(new Uint8Array(bytes));
  let hex = "";
  for (const b of buffer) hex += b.toString(16).padStart(2, "0");
  // An all-zero id is invalid in OTLP; a random one is all zero once in 2^64 at worst.
  return /^0+$/.test(hex) ? `${hex.slice(0, -1)}1` : hex;
}

function spanOf(record: SpanRecord, now: () => number): Span {
  return {
    setAttributes: (attributes) => {
      if (record.end === null) Object.assign(record.attributes, attributes);
    },
    addEvent: (name, attributes = {}) => {
      if (record.end === null && record.events.length < MAX_EVENTS_PER_SPAN) record.events.push({ name, at: now(), attributes });
    },
    end: (error) => {
      if (record.end !== null) return;
      record.end = now();
      record.error = error;
    },
  };
}

export class OtlpTracer implements Tracer {
  readonly captureContent: boolean;
  private readonly runs = new Map<string, RunTrace>();
  private readonly url: string;
  /** The last export failed and was logged: the next failures are not, until one succeeds. */
  private failing = false;

  constructor(
    private readonly options: OtlpOptions,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly send: typeof fetch = (input, init) => fetch(input, init),
  ) {
    this.captureContent = options.captureContent;
    this.url = tracesUrl(options.endpoint);
  }

  private readonly now = () => this.clock.now();

  private record(name: string, kind: SpanKind, parentSpanId: string, attributes: Attributes): SpanRecord {
    return {
      spanId: randomHex(8),
      parentSpanId,
      name,
      kind,
      start: this.now(),
      end: null,
      attributes: { ...attributes },
      events: [],
      error: undefined,
    };
  }

  startRun(run: RunKey, name: string, attributes: Attributes): Span {
    const key = keyOf(run);
    if (this.runs.has(key) || this.runs.size >= MAX_OPEN_RUNS) return noopSpan;
    const root = this.record(name, "internal", "", attributes);
    this.runs.set(key, { traceId: randomHex(16), root, spans: [root], dropped: 0 });
    return spanOf(root, this.now);
  }

  startChild(key: RunKey | null, name: string, kind: SpanKind, attributes: Attributes): Span {
    const run = key ? this.runs.get(keyOf(key)) : undefined;
    if (!run) return noopSpan;
    if (run.spans.length >= MAX_SPANS_PER_RUN) {
      run.dropped++;
      return noopSpan;
    }
    const record = this.record(name, kind, run.root.spanId, attributes);
    run.spans.push(record);
    return spanOf(record, this.now);
  }

  finishRun(key: RunKey): Promise<void> {
    const run = this.runs.get(keyOf(key));
    if (!run) return Promise.resolve();
    this.runs.delete(keyOf(key));
    return this.export(run).catch(() => {});
  }

  private async export(run: RunTrace): Promise<void> {
    const end = this.now();
    if (run.dropped > 0) run.root.attributes["fleetwarden.trace.dropped_spans"] = run.dropped;
    let body: string;
    try {
      body = JSON.stringify(this.payload(run, end));
    } catch (err) {
      this.failed(`could not encode the spans: ${String(err)}`);
      return;
    }
    try {
      const response = await this.send(this.url, {
        method: "POST",
        headers: { ...this.options.headers, "content-type": "application/json" },
        body,
        signal: AbortSignal.timeout(this.options.timeoutMs ?? EXPORT_TIMEOUT_MS),
      });
      // The body is not needed; reading it frees the connection (a cancel would do on Workers too).
      await response.body?.cancel().catch(() => {});
      if (!response.ok) {
        this.failed(`the collector answered ${response.status}`);
        return;
      }
      this.failing = false;
    } catch (err) {
      this.failed(err instanceof Error ? `${err.name}: ${err.message}` : String(err));
    }
  }

  private failed(error: string): void {
    if (this.failing) return;
    this.failing = true;
    this.log.error("trace export failed; spans dropped (logged once until an export succeeds)", { url: this.url, error });
  }

  /** The ExportTraceServiceRequest of one run: one resource, one scope, its spans. */
  private payload(run: RunTrace, end: number) {
    return {
      resourceSpans: [
        {
          resource: { attributes: encodeAttributes({ "service.name": this.options.serviceName }) },
          scopeSpans: [
            {
              scope: { name: "fleetwarden" },
              spans: run.spans.map((span) => ({
                traceId: run.traceId,
                spanId: span.spanId,
                ...(span.parentSpanId ? { parentSpanId: span.parentSpanId } : {}),
                name: span.name,
                kind: SPAN_KIND[span.kind],
                startTimeUnixNano: nanos(span.start),
                // A span still open when its run finished ends with the run.
                endTimeUnixNano: nanos(Math.max(span.start, span.end ?? end)),
                attributes: encodeAttributes(span.attributes),
                events: span.events.map((e) => ({ timeUnixNano: nanos(e.at), name: e.name, attributes: encodeAttributes(e.attributes) })),
                status: span.error
                  ? { code: STATUS_ERROR, message: span.error.slice(0, 1000) }
                  : { code: span.end === null ? 0 : STATUS_OK },
              })),
            },
          ],
        },
      ],
    };
  }
}

const keyOf = (run: RunKey) => `${run.agentId}\u0000${run.runId}`;

/** Milliseconds since the epoch as OTLP's fixed64 nanoseconds, a decimal string. */
function nanos(ms: number): string {
  return (BigInt(Math.floor(ms)) * 1_000_000n).toString();
}

function encodeValue(value: AttributeValue): Record<string, unknown> {
  if (typeof value === "string") return { stringValue: value.length > MAX_ATTRIBUTE_CHARS ? value.slice(0, MAX_ATTRIBUTE_CHARS) : value };
  if (typeof value === "boolean") return { boolValue: value };
  if (typeof value === "number") return Number.isInteger(value) ? { intValue: String(value) } : { doubleValue: value };
  return { arrayValue: { values: value.map((v) => encodeValue(v)) } };
}

function encodeAttributes(attributes: Attributes) {
  return Object.entries(attributes).flatMap(([key, value]) =>
    value === null || value === undefined ? [] : [{ key, value: encodeValue(value) }],
  );
}

/** The host's tracer: the OTLP exporter when an endpoint is set (Config `otel`), else one that records nothing. */
export function tracerFromSettings(
  otel: { endpoint?: string | undefined; headers?: Record<string, string>; serviceName: string; captureContent: boolean },
  clock: Clock,
  log: Logger,
): Tracer {
  if (!otel.endpoint) return noopTracer;
  return new OtlpTracer(
    { endpoint: otel.endpoint, headers: otel.headers ?? {}, serviceName: otel.serviceName, captureContent: otel.captureContent },
    clock,
    log,
  );
}
