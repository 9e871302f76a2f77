/**
 * The rejection blocks on one instance (fleet/actions/action-blocks.ts): an action a human rejected that
 * the agent and the rules policy may not ask for again until the block ends, each with who
 * rejected it, the note and the end, and a Lift form for operators (the lift names them).
 */
import type { ActionBlock } from "../../fleet/actions/action-blocks.ts";
import { relative, utcTime } from "../shell/format.ts";
import { CsrfField } from "../shell/layout.tsx";

export function InstanceBlocks({
  blocks,
  csrf,
  canLift,
  now,
}: {
  blocks: readonly ActionBlock[];
  csrf: string;
  canLift: boolean;
  now: number;
}) {
  if (blocks.length === 0) return null;
  return (
    <section class="panel" aria-labelledby="blocks-heading">
      <h2 id="blocks-heading">Blocked actions</h2>
      <ul class="cards" data-testid="instance-blocks">
        {blocks.map((b) => (
          <li class="card">
            <p>{`${b.kind}: rejected by ${b.rejectedBy} ${utcTime(b.rejectedAt)}${b.note ? ` (“${b.note}”)` : ""}; blocked until ${utcTime(b.until)} (${relative(b.until, now)}).`}</p>
            {canLift ? (
              <form method="post" action={`/blocks/${b.id}/lift`}>
                <CsrfField token={csrf} />
                <button type="submit" class="secondary small">{`Lift the ${b.kind} block`}</button>
              </form>
            ) : null}
          </li>
        ))}
      </ul>
    </section>
  );
}
