/**
 * The value forms with rules of their own (a libSQL URL, a Standard Webhooks secret, an
 * approval list where `none` is the explicit empty list, a public origin, an instance filter, a
 * provider account), each written once and named by the rows that use them.
 */
import { z } from "zod";
import { plainText } from "../plain-text.ts";
import { httpUrl, httpUrlProblem, token } from "../setting-bounds.ts";

/**
 * Action kinds an approval can guard. The same list as fleet/actions/action-types.ts ACTION_KINDS (runtime
 * sits below fleet, so it cannot import it; test/security/config-refusals.test.ts checks they agree).
 */
export const APPROVABLE_ACTIONS = ["start", "stop", "reboot", "destroy", "label", "replace", "rent"] as const;

/** Fleet providers, as fleet/providers/provider.ts PROVIDER_KINDS (runtime sits below fleet). */
export const PROVIDERS = ["vast", "runpod", "lambda", "simulator"] as const;

/** `none` is the explicit empty list: a blank list (`,`) is a typo, not a decision to guard nothing. */
export const NO_APPROVALS = "none";

export const optionalToken = token.optional();
export const optionalUrl = httpUrl.optional();

/** The libSQL URL forms both clients accept: an embedded file, memory, or a remote server. */
export const databaseUrl = z.string().superRefine((url, ctx) => {
  const problem = databaseUrlProblem(url);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});

export function databaseUrlProblem(url: string): string | null {
  if (url === ":memory:") return null;
  if (url.startsWith("file:")) return url.length > "file:".length ? null : "has no path after file: (e.g. file:./data/fleetwarden.db)";
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url)?.[1]?.toLowerCase();
  if (!scheme) return `is not a libSQL URL: use file:<path>, :memory:, libsql://<host> or https://<host> (got "${url.slice(0, 60)}")`;
  if (!["libsql", "http", "https", "ws", "wss"].includes(scheme)) {
    return `has the unsupported scheme ${scheme}:// (use file:<path>, :memory:, libsql://, http(s):// or ws(s)://)`;
  }
  try {
    if (!new URL(url).hostname) return "has no host name";
  } catch {
    return "is not a valid URL";
  }
  return null;
}

/** `whsec_` + base64 of 24–64 bytes, the Standard Webhooks secret form. */
export const webhookSecret = z
  .string()
  .trim()
  .superRefine((secret, ctx) => {
    const body = secret.startsWith("whsec_") ? secret.slice("whsec_".length) : null;
    const bytes =
      body && /^[A-Za-z0-9+/]+={0,2}$/.test(body) && body.length % 4 === 0
        ? (body.length / 4) * 3 - (body.match(/=+$/)?.[0].length ?? 0)
        : -1;
    if (bytes < 24 || bytes > 64)
      ctx.addIssue({ code: "custom", message: "must be whsec_ followed by the base64 of 24 to 64 random bytes" });
  });

const unknownActions = (names: string[]) => names.filter((s) => !(APPROVABLE_ACTIONS as readonly string[]).includes(s));
const unknownMessage = (unknown: string[]) =>
  `names unknown action ${unknown.map((u) => `"${u}"`).join(", ")} (known: ${APPROVABLE_ACTIONS.join(", ")})`;

export const approvalList = z.string().superRefine((list, ctx) => {
  if (list.trim() === NO_APPROVALS) return;
  const names = list
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (names.length === 0) {
    ctx.addIssue({
      code: "custom",
      message: `lists no action: write "${NO_APPROVALS}" to require no approvals (known: ${APPROVABLE_ACTIONS.join(", ")})`,
    });
    return;
  }
  const unknown = unknownActions(names);
  if (unknown.length > 0) ctx.addIssue({ code: "custom", message: unknownMessage(unknown) });
});

/** Like approvalList, but empty (unset) means none too: APPROVAL_TWO_PERSON is opt-in. */
export const optionalActionList = z.string().superRefine((list, ctx) => {
  if (list.trim() === NO_APPROVALS) return;
  const unknown = unknownActions(
    list
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean),
  );
  if (unknown.length > 0) ctx.addIssue({ code: "custom", message: unknownMessage(unknown) });
});

/** The actions a list names; `none` names none. */
export function approvalActions(list: string): string[] {
  return list.trim() === NO_APPROVALS
    ? []
    : list
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean);
}

export const flag = z.enum(["true", "false"], "must be true or false").transform((v) => v === "true");

/**
 * PUBLIC_URL is an origin: the CSRF check compares a request's Origin with it and QStash delivers
 * below it, so it must be http(s) with a host and no path, query or credentials (`javascript:x`
 * has the origin `null`, which a request's `Origin: null` would match). Kept as the bare origin.
 */
export const publicOrigin = httpUrl
  .superRefine((url, ctx) => {
    if (httpUrlProblem(url)) return;
    const u = new URL(url);
    if (u.pathname !== "/" || u.search || u.hash || u.username || u.password) {
      ctx.addIssue({
        code: "custom",
        message: `must be an origin such as https://fleet.example.com (no path, query or credentials; got "${url.slice(0, 80)}")`,
      });
    }
  })
  .transform((url) => (httpUrlProblem(url) ? url : new URL(url).origin));

/**
 * Which instances an agent acts on, when several agents share one provider account: those whose
 * label starts with `labelPrefix`, or exactly the listed `ids`. Unset: every instance.
 */
export const instanceFilter = z
  .object({
    labelPrefix: plainText(z.string().min(1, "must not be empty").max(64)).optional(),
    ids: z
      .array(plainText(z.string().min(1).max(64)))
      .min(1, "must list at least one id")
      .max(1000)
      .optional(),
  })
  .strict()
  .refine((f) => (f.labelPrefix === undefined) !== (f.ids === undefined), "must give exactly one of labelPrefix or ids");

/** An agent's own provider account; the key is a secret (shown masked, kept when the mask is sent back). */
export const providerSetting = z
  .object({ kind: z.enum(PROVIDERS), apiKey: token.min(1).max(512).optional(), url: httpUrl.optional() })
  .strict();

/** A channel URL shown without its secret parts: scheme, host and a hint of the path. */
export function maskUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}/…`;
  } catch {
    return "…";
  }
}

/** A provider API key shown without its secret: its last four characters, when it is long enough to spare them. */
export function maskKey(key: string): string {
  return key.length >= 16 ? `…${key.slice(-4)}` : "…";
}
