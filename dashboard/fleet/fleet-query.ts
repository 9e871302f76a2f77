/**
 * The Fleet table's view options, read from the page's query string: which column it is sorted
 * by, in which direction, and which state it is filtered to. Validated, so a bad link is a 400
 * naming the problem rather than a silently different view.
 */
import { z } from "zod";
import type { InstanceView } from "../../fleet/instances/list-instances.ts";
import { INSTANCE_STATES } from "../../fleet/providers/provider.ts";
import { RequestError } from "../../jobs/errors.ts";
import { describeIssues } from "../../jobs/validate.ts";

export const SORT_COLUMNS = ["id", "state", "since", "lastSeen", "price"] as const;
export type SortColumn = (typeof SORT_COLUMNS)[number];

const fleetQuery = z.object({
  sort: z.enum(SORT_COLUMNS, `must be one of ${SORT_COLUMNS.join(", ")}`).default("id"),
  dir: z.enum(["asc", "desc"], "must be asc or desc").default("asc"),
  state: z.union([z.literal(""), z.enum(INSTANCE_STATES)], `must be empty or one of ${INSTANCE_STATES.join(", ")}`).default(""),
});

export type FleetQuery = z.infer<typeof fleetQuery>;

export function parseFleetQuery(query: Record<string, string | undefined>): FleetQuery {
  const parsed = fleetQuery.safeParse({ sort: query.sort || undefined, dir: query.dir || undefined, state: query.state ?? undefined });
  if (!parsed.success) throw new RequestError(400, `invalid fleet view: ${describeIssues(parsed.error.issues)}`);
  return parsed.data;
}

const time = (iso: string | null) => (iso ? new Date(iso).getTime() : 0);
const KEYS: Record<SortColumn, (i: InstanceView) => string | number> = {
  id: (i) => i.id,
  state: (i) => i.state,
  since: (i) => time(i.stateAt),
  lastSeen: (i) => time(i.lastSeenAt),
  price: (i) => i.pricePerHour ?? -1,
};

/** Filtered and sorted; gone instances always last. */
export function arrangeFleet(instances: InstanceView[], q: FleetQuery): InstanceView[] {
  const key = KEYS[q.sort];
  const sign = q.dir === "asc" ? 1 : -1;
  return instances
    .filter((i) => q.state === "" || i.state === q.state)
    .sort((a, b) => {
      if (a.gone !== b.gone) return a.gone ? 1 : -1;
      const x = key(a);
      const y = key(b);
      return (x < y ? -1 : x > y ? 1 : a.id.localeCompare(b.id)) * sign;
    });
}

/** The query string for a view (defaults left out), e.g. "?sort=state&dir=desc". */
export function fleetHref(q: FleetQuery): string {
  const params = new URLSearchParams();
  if (q.sort !== "id") params.set("sort", q.sort);
  if (q.dir !== "asc") params.set("dir", q.dir);
  if (q.state) params.set("state", q.state);
  const s = params.toString();
  return s ? `/fleet?${s}` : "/fleet";
}
