/**
 * The tracer port: what a run, an LLM call and a provider action say about themselves for traces.
 * Spans are grouped by run (agent and run id; the run's span is the root, everything else a child of it), so no
 * layer has to carry a span object through its calls: the LLM caller and the action carrier name
 * the run they belong to, and a call outside a traced run records nothing. The default tracer
 * records nothing; the OTLP exporter (runtime/otlp-tracer.ts) is one implementation, chosen by the
 * host when OTEL_EXPORTER_OTLP_ENDPOINT is set. A tracer never throws into the code it observes.
 */

export type AttributeValue = string | number | boolean | readonly string[];
/** Attributes of a span or event; a null or undefined value is left out. */
export type Attributes = Record<string, AttributeValue | null | undefined>;

/** A run: run ids count per agent, so the agent is part of the key. */
export interface RunKey {
  agentId: string;
  runId: number;
}

/** OTLP's SpanKind (opentelemetry/proto/trace/v1/trace.proto): internal work, or a call out. */
export type SpanKind = "internal" | "client";

export interface Span {
  setAttributes(attributes: Attributes): void;
  addEvent(name: string, attributes?: Attributes): void;
  /** Ends the span; an error marks its status as an error with that message. Later calls do nothing. */
  end(error?: string | null): void;
}

export interface Tracer {
  /** Whether message content may be recorded (OTEL_CAPTURE_CONTENT); false unless opted in. */
  readonly captureContent: boolean;
  /** Opens the root span of a run. */
  startRun(run: RunKey, name: string, attributes: Attributes): Span;
  /** A child of the run's span; a span that records nothing when the run is not traced. */
  startChild(run: RunKey | null, name: string, kind: SpanKind, attributes: Attributes): Span;
  /**
   * Forgets the run and sends its spans, once. Never rejects and never waits past the exporter's
   * timeout; the caller does not wait for it (it is handed to the host's `waitUntil`, if any).
   */
  finishRun(run: RunKey): Promise<void>;
}

export const noopSpan: Span = {
  setAttributes: () => {},
  addEvent: () => {},
  end: () => {},
};

/** Records nothing: the tracer when no exporter is configured. */
export const noopTracer: Tracer = {
  captureContent: false,
  startRun: () => noopSpan,
  startChild: () => noopSpan,
  finishRun: () => Promise.resolve(),
};
