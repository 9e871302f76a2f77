/**
 * Records whose shape another module owns (inbox event payloads, tool arguments and results, the
 * compaction record) written as sentences and "key: value" lines a person reads at a glance,
 * instead of JSON dumps. Unknown shapes fall back to "key: value" lines, never to nothing.
 */
import type { FitReport } from "../../agent/prompt/budget.ts";

function parsed(value: unknown): unknown {
  if (typeof value !== "string") return value;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

const scalar = (v: unknown): string => (v === null || v === undefined ? "—" : typeof v === "object" ? JSON.stringify(v) : String(v));

/** `{instance_id: "sim-1", reason: "slow"}` → "instance_id: sim-1, reason: slow". */
export function keyValues(value: unknown, separator = ", "): string {
  const v = parsed(value);
  if (v === null || typeof v !== "object" || Array.isArray(v)) return scalar(v);
  const entries = Object.entries(v as Record<string, unknown>);
  if (entries.length === 0) return "no arguments";
  return entries.map(([k, x]) => `${k}: ${scalar(x)}`).join(separator);
}

/** " from alice": the operator an event names (chat, trigger), or nothing. */
const by = (p: Record<string, unknown>) => (typeof p.operator === "string" && p.operator ? ` from ${p.operator}` : "");

/** What an inbox event says, in one sentence, naming the operator who sent it. */
export function describeEvent(source: string, payload: unknown): string {
  const p = (parsed(payload) ?? {}) as Record<string, unknown>;
  switch (source) {
    case "human":
      return `Message${by(p)}: “${scalar(p.text)}”`;
    case "manual":
      return `Manual trigger${by(p)}${p.reason ? `: ${scalar(p.reason)}` : ""}`;
    case "approval":
      return `A human ${p.decision === "approve" ? "approved" : "rejected"} ${scalar(p.kind)} ${scalar(p.instanceId)}${p.note ? ` (note: ${scalar(p.note)})` : ""}`;
    case "webhook":
    case "reconcile":
    case "heartbeat":
      if (p.gone) return `${scalar(p.instanceId)} is no longer listed by the provider (last ${scalar(p.lastState)})`;
      if (p.heartbeatMissed)
        return `${scalar(p.instanceId)} missed its heartbeat (silent ${scalar(p.silentForS)} s, state ${scalar(p.state)})`;
      return `${scalar(p.instanceId)} → ${scalar(p.state)}${p.message ? ` (${scalar(p.message)})` : ""}`;
    default:
      return keyValues(p);
  }
}

const n = (x: number) => x.toLocaleString("en-US");
const plural = (count: number, one: string, many = `${one}s`) => `${n(count)} ${count === 1 ? one : many}`;

/** One call's fitting, in words: "stubbed 3 tool outputs, summarised 12 turns, 24,982 of 30,000 tokens". */
export function describeFit(r: Partial<FitReport>, budget: number | undefined): string {
  const did: string[] = [];
  if (r.stubbedToolOutputs) did.push(`stubbed ${plural(r.stubbedToolOutputs, "tool output")}`);
  if (r.droppedNoopTurns) did.push(`dropped ${plural(r.droppedNoopTurns, "no-op turn")}`);
  if (r.summarized) did.push(`summarised ${plural(r.summarized.turns, "turn")}`);
  if (r.summaryError) did.push(`could not summarise (${r.summaryError})`);
  if (r.trimmedTurns) did.push(`trimmed ${plural(r.trimmedTurns, "turn")}`);
  if (r.truncatedToolOutputs) did.push("shortened tool outputs");
  if (r.truncatedSummary) did.push("shortened the summary for this call");
  if (r.truncatedInput) did.push("shortened this run’s input");
  const of = budget ?? r.budget;
  const size = r.after !== undefined ? `${n(r.after)}${of ? ` of ${n(of)}` : ""} tokens` : "";
  const from = r.before !== undefined && r.after !== undefined && r.before !== r.after ? ` (from ${n(r.before)})` : "";
  if (did.length === 0) return size ? `fit without compaction: ${size}` : "fit without compaction";
  return `${did.join(", ")}; ${size}${from}`;
}

/** The run's compaction record as sentences, one per LLM call. */
export function describeCompaction(record: unknown): string[] {
  const r = parsed(record) as { budget?: number; calls?: Partial<FitReport>[] } | null;
  if (!r || typeof r !== "object") return [];
  if (!Array.isArray(r.calls)) return [describeFit(r as Partial<FitReport>, undefined)];
  if (r.calls.length === 0) return ["No LLM call was made, so nothing was measured or compacted."];
  return r.calls.map((call, i) => `LLM call ${i + 1}: ${describeFit(call, r.budget)}.`);
}
