/**
 * The approvals page's active rejections (issue #24, item 4): each action a human's rejection
 * blocks, who rejected it and until when, and, for a role that may decide, a Lift form (the
 * dashboard's counterpart of DELETE /api/agents/:agent/blocks/:id: the agent may ask again).
 */
import type { Context } from "hono";
import type { AppEnv } from "../../jobs/app-env.ts";
import { RequestError } from "../../jobs/errors.ts";
import { liftBlockAsOperator } from "../../jobs/lift-block.ts";
import type { Role } from "../../auth/roles.ts";
import type { ActionBlock } from "../../fleet/actions/action-blocks.ts";
import { agentPath } from "../shell/agent-links.ts";
import { canDecide } from "./approvals.tsx";
import { utcTime } from "../shell/format.ts";
import { iso } from "../../runtime/time.ts";
import { CsrfField } from "../shell/layout.tsx";
import { selectedAgentId } from "../shell/selected-agent.tsx";

export function ActiveBlocks({ blocks, csrf, role }: { blocks: ActionBlock[]; csrf: string; role: Role }) {
  return (
    <>
      <h2>Rejections in force</h2>
      {blocks.length ? (
        <ul class="cards">
          {blocks.map((b) => (
            <li class="card" id={`block-${b.id}`}>
              <p>{`${b.kind} ${b.instanceId} rejected by ${b.rejectedBy}${b.note ? ` ("${b.note}")` : ""}; blocked until ${utcTime(iso(b.until))}`}</p>
              {canDecide(role) ? (
                <form method="post" action={`/approvals/blocks/${b.id}/lift`}>
                  <CsrfField token={csrf} />
                  <button type="submit" class="secondary">{`Lift: let the agent ask to ${b.kind} ${b.instanceId} again`}</button>
                </form>
              ) : null}
            </li>
          ))}
        </ul>
      ) : (
        <p>No rejection blocks an action.</p>
      )}
    </>
  );
}

/** POST /approvals/blocks/:blockId/lift (operator): lifts the block, audited as `lift_block`. */
export async function postLiftBlock(c: Context<AppEnv>) {
  const blockId = Number(c.req.param("blockId"));
  if (!Number.isInteger(blockId) || blockId < 1) throw new RequestError(400, "invalid block id: must be a positive integer");
  const agentId = selectedAgentId(c);
  await liftBlockAsOperator(c.get("deps"), c.get("operator"), agentId, blockId);
  return c.redirect(agentPath("/approvals?done=lifted", agentId), 303);
}
