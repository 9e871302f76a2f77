/**
 * Vast.ai query strings byte for byte as vast-cli builds them (vast-ai/vast-cli 55679830,
 * vastai/api/client.py `_build_url`), so the API sees exactly what vast-cli sends.
 */
/**
 * A query string as vast-cli's `_build_url` builds it: strings as they are, every other value
 * through Python's `json.dumps`, then form-encoded (`quote_plus`), in the order given, so the
 * API sees byte for byte what vast-cli sends.
 */
export function vastQuery(args: Record<string, unknown>): string {
  return new URLSearchParams(
    Object.entries(args).map(([name, value]) => [name, typeof value === "string" ? value : pythonJsonDumps(value)]),
  ).toString();
}

/** Python's `json.dumps` with its defaults: `", "` and `": "` separators, ASCII only. */
function pythonJsonDumps(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(pythonJsonDumps).join(", ")}]`;
  if (value !== null && typeof value === "object") {
    return `{${Object.entries(value)
      .map(([k, v]) => `${pythonJsonDumps(k)}: ${pythonJsonDumps(v)}`)
      .join(", ")}}`;
  }
  return JSON.stringify(value).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
