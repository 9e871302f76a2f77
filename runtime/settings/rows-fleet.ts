/** Rows of the settings table: provider accounts, the simulator, instance timeouts and replacement. */
import { z } from "zod";
import { httpUrl, INTERVAL_MAX_S, SIMULATOR_FAILURES_PER_HOUR_MAX, WINDOW_MAX_S } from "../setting-bounds.ts";
import { flag, instanceFilter, maskKey, optionalToken, PROVIDERS, providerSetting } from "./forms.ts";
import { fraction, ms, secondsOrNever, whole } from "./numbers.ts";
import { setting } from "./setting.ts";

const providers = "Providers";
const instances = "Instances and replacement";

export const FLEET_ROWS = {
  PROVIDER: setting({
    group: providers,
    doc: "`vast`, `runpod`, `lambda` or `simulator`: the default agent's provider (and every agent's without its own); per agent, `{kind, apiKey?, url?}` is the agent's own account (the key falls back to the environment's for that kind, only while `url` is that kind's own host: a `url` elsewhere needs its own `apiKey`; the key is shown masked)",
    schema: z.enum(PROVIDERS).optional(),
    at: "provider",
    defaultText: "the one whose key is set (Vast.ai, then RunPod, then Lambda), else `simulator`",
    agent: {
      key: "provider",
      schema: providerSetting,
      // Not laid over Config: fleet/providers/providers.ts builds the agent's own provider from it.
      fold: false,
      to: (own) => own.kind,
      show: String,
      mask: {
        show: (own) => (own.apiKey ? { ...own, apiKey: maskKey(own.apiKey) } : own),
        keep: (sent, stored) =>
          sent.apiKey && stored.apiKey && sent.kind === stored.kind && sent.apiKey === maskKey(stored.apiKey)
            ? { ...sent, apiKey: stored.apiKey }
            : sent,
      },
    },
  }),
  VAST_API_KEY: setting({ group: providers, doc: "Vast.ai API key", schema: optionalToken, at: "vast.apiKey", secret: true }),
  VAST_URL: setting({ group: providers, doc: "Vast.ai API base", schema: httpUrl.default("https://console.vast.ai"), at: "vast.url" }),
  RUNPOD_API_KEY: setting({
    group: providers,
    doc: "RunPod API key (sent as `Authorization: Bearer`)",
    schema: optionalToken,
    at: "runpod.apiKey",
    secret: true,
  }),
  RUNPOD_URL: setting({
    group: providers,
    doc: "RunPod GraphQL endpoint (runtime, GPU prices, balance); pods go to RunPod's REST API, https://rest.runpod.io/v1 for RunPod's host, else this URL with /graphql made /v1",
    schema: httpUrl.default("https://api.runpod.io/graphql"),
    at: "runpod.url",
  }),
  LAMBDA_API_KEY: setting({
    group: providers,
    doc: "Lambda Cloud API key (sent as `Authorization: Bearer`)",
    schema: optionalToken,
    at: "lambda.apiKey",
    secret: true,
  }),
  LAMBDA_URL: setting({
    group: providers,
    doc: "Lambda Cloud API base",
    schema: httpUrl.default("https://cloud.lambdalabs.com/api/v1"),
    at: "lambda.url",
  }),
  SIMULATOR_INSTANCES: setting({ group: "Simulator", doc: "simulated fleet size", ...whole(0, 10_000, 4), at: "simulator.instances" }),
  SIMULATOR_FAILURE_RATE: setting({
    group: "Simulator",
    doc: "scripted failures per simulated instance per hour (`0` = quiet)",
    ...fraction(0, SIMULATOR_FAILURES_PER_HOUR_MAX, 2),
    at: "simulator.failureRatePerHour",
  }),
  HEARTBEAT_TIMEOUT_S: setting({
    group: instances,
    doc: "an instance that reports by webhook and stays silent this long becomes an event",
    ...whole(1, INTERVAL_MAX_S, 300),
    to: ms,
    at: "heartbeatTimeoutMs",
  }),
  LOADING_TIMEOUT_S: setting({
    group: instances,
    doc: "an instance in created/loading longer, or an action's expected state not reached by then, becomes an event",
    ...whole(1, INTERVAL_MAX_S, 900),
    to: ms,
    at: "loadingTimeoutMs",
  }),
  REPLACE_AFTER_S: setting({
    group: instances,
    doc: "an instance offline, unknown or gone this long becomes a replacement proposal (`0` = never)",
    ...whole(0, WINDOW_MAX_S, 1800),
    to: ms,
    at: "replace.afterMs",
    agent: {
      key: "replaceAfterS",
      field: { label: "Propose a replacement after dead (s, 0 = never)", input: "number" },
      show: secondsOrNever,
    },
  }),
  REPLACE_MAX_PRICE_FACTOR: setting({
    group: instances,
    doc: "a replacement's offer costs at most this × the old instance's price",
    ...fraction(1, 10, 1.25),
    at: "replace.maxPriceFactor",
    agent: {
      key: "replaceMaxPriceFactor",
      field: { label: "Replacement's max price (× the old price)", input: "number" },
      show: (factor) => `${factor} × the old price`,
    },
  }),
  REPLACE_MIN_RELIABILITY: setting({
    group: instances,
    doc: "a replacement's host has at least this reliability",
    ...fraction(0, 1, 0.95),
    at: "replace.minReliability",
  }),
  REPLACE_MAX_OFFERS: setting({
    group: instances,
    doc: "a replacement tries at most this many fitting offers, cheapest first, when one is taken or out of capacity",
    ...whole(1, 10, 3),
    at: "replace.maxOffers",
  }),
  REPLACE_MAX_PRICE_PER_HOUR: setting({
    group: instances,
    doc: "a replacement of an instance whose price is unknown costs at most this ($/h); `0`: such a replacement waits for a human instead of renting with no cap",
    ...fraction(0, 1000, 0),
    at: "replace.maxPricePerHour",
    agent: { key: "replaceMaxPricePerHour", show: (v) => (v ? `$${v}/h` : "a human decides") },
  }),
  instanceFilter: setting({
    group: "Per agent only",
    doc: "which of the provider account's instances the agent acts on, when several agents share one account: `{labelPrefix}` (labels starting with it) or `{ids}` (these, and what the agent rents itself: labelled `fw-own:<agent>:`); what the agent rents is labelled so its filter claims it, and a relabel out of the filter is refused; unset: every instance",
    env: false,
    schema: z.never().optional(),
    defaultText: "every instance",
    bounds: "exactly one of `labelPrefix` (1–64 characters) or `ids` (1–1,000)",
    agent: {
      key: "instanceFilter",
      schema: instanceFilter,
      fold: false,
      field: { label: "Instances this agent acts on", input: "instanceFilter" },
    },
  }),
  STALL_AFTER_S: setting({
    group: instances,
    doc: "a running instance that reports a progress counter (the instance webhook's `progress`) and whose counter has not grown for this long is `stalled`: told once per stall episode (fleet/instances/stall.ts); instances that never report progress are never stalled",
    ...whole(1, WINDOW_MAX_S, 1800),
    to: ms,
    at: "stall.afterMs",
    agent: { key: "stallAfterS", field: { label: "Stalled after no progress (s)", input: "number" }, show: secondsOrNever },
  }),
  STALL_ACTION: setting({
    group: instances,
    doc: "what the tick does to a stalled instance, once per stall episode, through the action table (decided by `rules`): `none`, `reboot` or `stop`",
    schema: z.enum(["none", "reboot", "stop"]).default("none"),
    at: "stall.action",
    bounds: "`none`, `reboot` or `stop`",
    agent: { key: "stallAction", schema: z.enum(["none", "reboot", "stop"]), show: String },
  }),
  STALL_ACTION_APPROVAL: setting({
    group: instances,
    doc: "`true`: the STALL_ACTION is filed as an approval request (the caller asks a human); `false`: it goes through the action table like any rules decision (APPROVAL_REQUIRED_ACTIONS still applies)",
    schema: flag.default(true),
    at: "stall.approval",
    bounds: "`true` or `false`",
  }),
  LEASE_GRACE_S: setting({
    group: instances,
    doc: "a rental's lease that ran out unrenewed is told to its owner at once, and its instance is stopped this long after (fleet/leases/lease-expiry.ts; a destroy only by approval)",
    ...whole(0, WINDOW_MAX_S, 600),
    to: ms,
    at: "leaseGraceMs",
    agent: {
      key: "leaseGraceS",
      field: { label: "Lease grace before stopping (s)", input: "number" },
      show: (graceMs) => `${Number(graceMs) / 1000} s`,
    },
  }),
  ORPHANS: setting({
    group: instances,
    doc: "instances in the provider account that no agent's filter claims, or whose lease owner no longer exists (fleet/leases/orphans.ts): `none` ignores them, `tell` tells once per instance per day with their $/h, `stop` also asks a human to approve stopping each",
    schema: z.enum(["none", "tell", "stop"]).default("tell"),
    at: "orphans",
    agent: { key: "orphans", schema: z.enum(["none", "tell", "stop"]), show: String },
  }),
};
