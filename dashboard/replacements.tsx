/**
 * A replacement's lineage on the instance page (fleet/replacement.ts records it): the instance
 * this one replaced and the one that replaced it, each a link to its own page. Nothing when the
 * instance has no lineage.
 */
import type { InstanceView } from "../fleet/list-instances.ts";

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
