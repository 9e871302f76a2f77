/**
 * Replacements on the dashboard (fleet/replacement/replacement.ts records them): on the instance page the
 * lineage — the instance this one replaced and the one that replaced it, each a link to its own
 * page — and on the fleet page the replacements in progress, with what each is waiting for.
 */
import type { InstanceView } from "../../fleet/instances/list-instances.ts";
import type { presentReplacement } from "../../fleet/replacement/replacement-rows.ts";

type ReplacementView = ReturnType<typeof presentReplacement>;

/** What an open replacement is waiting for, in words. */
const STAGE: Record<string, string> = {
  proposed: "proposed",
  awaiting_approval: "waiting for a human's approval",
  approved: "approved: searching offers",
  creating: "renting the new instance",
  waiting: "waiting for the new instance to run (the old one is kept until then)",
  finishing: "the new instance runs: destroying the old one",
};

const link = (id: string) => <a href={`/fleet/${encodeURIComponent(id)}`}>{id}</a>;

export function ReplacementLineage({ instance }: { instance: Pick<InstanceView, "replaces" | "replacedBy"> }) {
  if (!instance.replaces && !instance.replacedBy) return null;
  return (
    <section class="panel" aria-labelledby="instance-lineage">
      <h2 id="instance-lineage">Replacement</h2>
      <dl>
        {instance.replaces ? (
          <>
            <dt>Replaces</dt>
            <dd>{link(instance.replaces)}</dd>
          </>
        ) : null}
        {instance.replacedBy ? (
          <>
            <dt>Replaced by</dt>
            <dd>{link(instance.replacedBy)}</dd>
          </>
        ) : null}
      </dl>
    </section>
  );
}

/** The fleet page's list of replacements not finished yet; nothing when there are none. */
export function ReplacementsInProgress({ replacements }: { replacements: readonly ReplacementView[] }) {
  if (replacements.length === 0) return null;
  return (
    <section class="panel" aria-labelledby="replacements-in-progress">
      <h2 id="replacements-in-progress">Replacements in progress</h2>
      <div class="table-wrap" tabindex={0} role="region" aria-label="Replacements in progress">
        <table>
          <thead>
            <tr>
              <th scope="col">Dead instance</th>
              <th scope="col">New instance</th>
              <th scope="col">Stage</th>
              <th scope="col">Since</th>
            </tr>
          </thead>
          <tbody>
            {replacements.map((r) => (
              <tr>
                <td>{link(r.oldInstanceId)}</td>
                <td>{r.newInstanceId ? link(r.newInstanceId) : "not rented yet"}</td>
                <td>{STAGE[r.status] ?? r.status}</td>
                <td>{r.createdAt}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
