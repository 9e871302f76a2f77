/**
 * The CLI's one way to fleetwarden: the operator API over HTTP with a bearer token
 * (FLEETWARDEN_URL, FLEETWARDEN_TOKEN). Every non-2xx answer becomes an ApiError carrying the
 * server's own JSON error text and the exit code its status means (cli/exit-codes.ts).
 */
import { EXIT, exitForStatus, type ExitCode } from "./exit-codes.ts";

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode,
  ) {
    super(message);
    this.name = "CliError";
  }
}

export interface Answer {
  status: number;
  body: Record<string, unknown>;
}

export interface Api {
  readonly url: string;
  call(method: string, path: string, body?: unknown): Promise<Answer>;
}

export function createApi(url: string, token: string | undefined, fetchImpl: typeof fetch = fetch): Api {
  const base = url.replace(/\/+$/, "");
  return {
    url: base,
    async call(method, path, body) {
      const headers: Record<string, string> = { accept: "application/json" };
      if (token) headers.authorization = `Bearer ${token}`;
      if (body !== undefined) headers["content-type"] = "application/json";
      let res: Response;
      try {
        res = await fetchImpl(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      } catch (err) {
        throw new CliError(`cannot reach ${base}: ${(err as Error).message}`, EXIT.unreachable);
      }
      const text = await res.text();
      let parsed: unknown = {};
      try {
        parsed = text ? JSON.parse(text) : {};
      } catch {
        parsed = { error: text.slice(0, 200) };
      }
      const json = (typeof parsed === "object" && parsed !== null ? parsed : { value: parsed }) as Record<string, unknown>;
      if (!res.ok) {
        const why = typeof json.error === "string" ? json.error : `HTTP ${res.status}`;
        const hint = res.status === 401 ? " (set FLEETWARDEN_TOKEN to an operator token)" : "";
        throw new CliError(`${method} ${path}: ${res.status} ${why}${hint}`, exitForStatus(res.status));
      }
      return { status: res.status, body: json };
    },
  };
}
