/**
 * A local OTLP/HTTP trace receiver on loopback, strict about what a collector accepts: only
 * `POST /v1/traces` with `Content-Type: application/json`, and a body that is an
 * ExportTraceServiceRequest in the JSON mapping of opentelemetry-proto (docs/specification.md,
 * "OTLP/HTTP Request" and "JSON Protobuf Encoding", commit d3b7479dd9085f8b761ab41cd0b204975d2b8138;
 * opentelemetry/proto/trace/v1/trace.proto and common/v1/common.proto, commit
 * 5cb53996db83838a8ce19ec7cf49b8f37b456d4f): resourceSpans[].scopeSpans[].spans[], traceId 16 bytes
 * and spanId 8 bytes as hex (not base64, never all zero), enums as integers, fixed64 times and
 * int64 values as decimal strings, each AnyValue exactly one of its cases. Anything else answers
 * 400 (Bad Data, as the spec says) and is kept in `refused`, so a test sees why.
 *
 * `mode` makes it a failing collector: `fail` answers 500, `hang` never answers.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import { listenLoopback, readJsonBody } from "../support/loopback-server.ts";

export interface OtlpValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string;
  doubleValue?: number;
  arrayValue?: { values: OtlpValue[] };
}

export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: { key: string; value: OtlpValue }[];
  events?: { timeUnixNano: string; name: string; attributes?: { key: string; value: OtlpValue }[] }[];
  status?: { code?: number; message?: string };
}

export interface OtlpExport {
  headers: IncomingHttpHeaders;
  serviceName: string | undefined;
  spans: OtlpSpan[];
}

const HEX32 = /^[0-9a-f]{32}$/i;
const HEX16 = /^[0-9a-f]{16}$/i;
const UINT = /^\d+$/;
const INT = /^-?\d+$/;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function valueProblem(value: unknown, at: string): string | null {
  if (!isObject(value)) return `${at} is not an AnyValue object`;
  const cases = Object.keys(value).filter((k) =>
    ["stringValue", "boolValue", "intValue", "doubleValue", "arrayValue", "kvlistValue", "bytesValue"].includes(k),
  );
  if (cases.length !== 1) return `${at} has ${cases.length} value cases (exactly one expected)`;
  const [kind] = cases;
  const v = value[kind!];
  if (kind === "stringValue" && typeof v !== "string") return `${at}.stringValue is not a string`;
  if (kind === "boolValue" && typeof v !== "boolean") return `${at}.boolValue is not a boolean`;
  if (kind === "intValue" && !(typeof v === "string" && INT.test(v))) return `${at}.intValue is not an int64 decimal string`;
  if (kind === "doubleValue" && typeof v !== "number") return `${at}.doubleValue is not a number`;
  if (kind === "arrayValue") {
    if (!isObject(v) || !Array.isArray(v.values)) return `${at}.arrayValue has no values list`;
    for (const [i, item] of v.values.entries()) {
      const problem = valueProblem(item, `${at}.arrayValue.values[${i}]`);
      if (problem) return problem;
    }
  }
  return null;
}

function attributesProblem(attributes: unknown, at: string): string | null {
  if (attributes === undefined) return null;
  if (!Array.isArray(attributes)) return `${at} is not a list`;
  const seen = new Set<string>();
  for (const [i, kv] of attributes.entries()) {
    if (!isObject(kv) || typeof kv.key !== "string" || kv.key === "") return `${at}[${i}] has no key`;
    if (seen.has(kv.key)) return `${at} repeats the key ${kv.key}`;
    seen.add(kv.key);
    const problem = valueProblem(kv.value, `${at}[${i}].value`);
    if (problem) return problem;
  }
  return null;
}

function spanProblem(span: unknown, at: string): string | null {
  if (!isObject(span)) return `${at} is not an object`;
  if (typeof span.traceId !== "string" || !HEX32.test(span.traceId) || /^0+$/.test(span.traceId))
    return `${at}.traceId is not 32 hex digits`;
  if (typeof span.spanId !== "string" || !HEX16.test(span.spanId) || /^0+$/.test(span.spanId)) return `${at}.spanId is not 16 hex digits`;
  if (
    span.parentSpanId !== undefined &&
    span.parentSpanId !== "" &&
    !(typeof span.parentSpanId === "string" && HEX16.test(span.parentSpanId))
  )
    return `${at}.parentSpanId is not 16 hex digits`;
  if (typeof span.name !== "string" || span.name === "") return `${at}.name is missing`;
  if (span.kind !== undefined && !(Number.isInteger(span.kind) && (span.kind as number) >= 0 && (span.kind as number) <= 5))
    return `${at}.kind is not a SpanKind integer`;
  for (const field of ["startTimeUnixNano", "endTimeUnixNano"] as const)
    if (typeof span[field] !== "string" || !UINT.test(span[field] as string)) return `${at}.${field} is not a fixed64 decimal string`;
  if (BigInt(span.endTimeUnixNano as string) < BigInt(span.startTimeUnixNano as string)) return `${at} ends before it starts`;
  const attributes = attributesProblem(span.attributes, `${at}.attributes`);
  if (attributes) return attributes;
  if (span.events !== undefined) {
    if (!Array.isArray(span.events)) return `${at}.events is not a list`;
    for (const [i, e] of span.events.entries()) {
      if (!isObject(e) || typeof e.name !== "string" || typeof e.timeUnixNano !== "string" || !UINT.test(e.timeUnixNano))
        return `${at}.events[${i}] is not an event`;
      const problem = attributesProblem(e.attributes, `${at}.events[${i}].attributes`);
      if (problem) return problem;
    }
  }
  if (span.status !== undefined) {
    if (!isObject(span.status)) return `${at}.status is not an object`;
    if (span.status.code !== undefined && !(Number.isInteger(span.status.code) && [0, 1, 2].includes(span.status.code as number)))
      return `${at}.status.code is not a StatusCode integer`;
  }
  return null;
}

/** The export's problem, or its spans and service name. */
export function checkExport(body: unknown): { problem: string } | { spans: OtlpSpan[]; serviceName: string | undefined } {
  if (!isObject(body) || !Array.isArray(body.resourceSpans) || body.resourceSpans.length === 0) return { problem: "no resourceSpans" };
  const spans: OtlpSpan[] = [];
  let serviceName: string | undefined;
  for (const [r, rs] of body.resourceSpans.entries()) {
    if (!isObject(rs) || !Array.isArray(rs.scopeSpans)) return { problem: `resourceSpans[${r}] has no scopeSpans` };
    if (rs.resource !== undefined) {
      if (!isObject(rs.resource)) return { problem: `resourceSpans[${r}].resource is not an object` };
      const problem = attributesProblem(rs.resource.attributes, `resourceSpans[${r}].resource.attributes`);
      if (problem) return { problem };
      const name = (rs.resource.attributes as { key: string; value: OtlpValue }[] | undefined)?.find((a) => a.key === "service.name");
      serviceName = name?.value.stringValue;
    }
    for (const [s, ss] of rs.scopeSpans.entries()) {
      if (!isObject(ss) || !Array.isArray(ss.spans)) return { problem: `resourceSpans[${r}].scopeSpans[${s}] has no spans` };
      for (const [i, span] of ss.spans.entries()) {
        const problem = spanProblem(span, `resourceSpans[${r}].scopeSpans[${s}].spans[${i}]`);
        if (problem) return { problem };
        spans.push(span as OtlpSpan);
      }
    }
  }
  return { spans, serviceName };
}

export interface OtlpReceiver {
  url: string;
  mode: "ok" | "fail" | "hang";
  received: OtlpExport[];
  refused: string[];
  /** Requests that arrived, answered or not. */
  arrived: number;
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const hanging: ServerResponse[] = [];
  const receiver: Omit<OtlpReceiver, "url" | "close"> = { mode: "ok", received: [], refused: [], arrived: 0 };
  const refuse = (res: ServerResponse, status: number, problem: string) => {
    receiver.refused.push(problem);
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify({ code: 3, message: problem }));
  };
  const server = createServer(async (req, res) => {
    receiver.arrived++;
    if (req.url !== "/v1/traces") return refuse(res, 404, `no such path ${req.url}`);
    if (req.method !== "POST") return refuse(res, 405, `method ${req.method}`);
    const type = (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
    if (type !== "application/json") return refuse(res, 415, `content-type ${type}`);
    const { json, invalid } = await readJsonBody(req);
    if (receiver.mode === "hang") return void hanging.push(res);
    if (receiver.mode === "fail") return refuse(res, 500, "scripted failure");
    if (invalid) return refuse(res, 400, "body is not JSON");
    const checked = checkExport(json);
    if ("problem" in checked) return refuse(res, 400, checked.problem);
    receiver.received.push({ headers: req.headers, ...checked });
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
  const listening = await listenLoopback(server);
  return Object.assign(receiver, {
    url: listening.origin,
    close: async () => {
      for (const res of hanging.splice(0)) res.destroy();
      await listening.close();
    },
  }) as OtlpReceiver;
}

/** A span's attributes as plain values (int64 strings as numbers, arrays as arrays). */
export function attributesOf(span: Pick<OtlpSpan, "attributes">): Record<string, unknown> {
  const plain = (v: OtlpValue): unknown =>
    v.stringValue ?? v.boolValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.doubleValue ?? v.arrayValue?.values.map(plain)));
  return Object.fromEntries(span.attributes.map((a) => [a.key, plain(a.value)]));
}
