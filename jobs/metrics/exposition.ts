/**
 * The Prometheus text exposition format, version 0.0.4 (prometheus.io/docs/instrumenting/
 * exposition_formats): one `# HELP` and `# TYPE` per family, then its samples, label values
 * escaped (backslash, double quote, newline), histograms as cumulative `_bucket{le}` plus `_sum`
 * and `_count`. Only what /metrics writes; test/metrics checks the output with a real parser.
 */

export type Labels = Record<string, string>;

export interface Sample {
  labels: Labels;
  value: number;
}

export interface HistogramSample {
  labels: Labels;
  /** Upper bound → observations at or below it (cumulative), without +Inf. */
  buckets: [number, number][];
  count: number;
  sum: number;
}

export type Family =
  | { name: string; help: string; type: "gauge" | "counter"; samples: Sample[] }
  | { name: string; help: string; type: "histogram"; samples: HistogramSample[] };

export const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

const escapeLabel = (value: string) => value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
const escapeHelp = (help: string) => help.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");

function labelText(labels: Labels): string {
  const pairs = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabel(v)}"`);
  return pairs.length ? `{${pairs.join(",")}}` : "";
}

function number(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Number.POSITIVE_INFINITY) return "+Inf";
  if (value === Number.NEGATIVE_INFINITY) return "-Inf";
  return String(value);
}

export function renderFamilies(families: readonly Family[]): string {
  const lines: string[] = [];
  for (const family of families) {
    lines.push(`# HELP ${family.name} ${escapeHelp(family.help)}`, `# TYPE ${family.name} ${family.type}`);
    if (family.type !== "histogram") {
      for (const s of family.samples) lines.push(`${family.name}${labelText(s.labels)} ${number(s.value)}`);
      continue;
    }
    for (const s of family.samples) {
      for (const [le, n] of s.buckets) lines.push(`${family.name}_bucket${labelText({ ...s.labels, le: String(le) })} ${n}`);
      lines.push(`${family.name}_bucket${labelText({ ...s.labels, le: "+Inf" })} ${s.count}`);
      lines.push(`${family.name}_sum${labelText(s.labels)} ${number(s.sum)}`, `${family.name}_count${labelText(s.labels)} ${s.count}`);
    }
  }
  return `${lines.join("\n")}\n`;
}
