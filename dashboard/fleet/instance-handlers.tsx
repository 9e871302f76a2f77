/**
 * The instance page's posts (already origin-, CSRF- and role-checked by the routes): an
 * operator's action, through the API route's own function (jobs/operator-instance-action.ts), and
 * lifting a rejection's block (jobs/lift-block.ts), both attributed to the operator. A stop,
 * reboot, destroy or replace acts only on its second post: the first (no `confirm=yes`) renders
 * what will happen and writes nothing. The form's nonce is the idempotency key, kept on the
 * confirmation, so a double-click is one action.
 */
import type { Context } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../jobs/app-env.ts";
import { RequestError } from "../../jobs/errors.ts";
import { describeIssues } from "../../jobs/validate.ts";
import { liftBlockAsOperator } from "../../jobs/lift-block.ts";
import { operatorInstanceAction } from "../../jobs/operator-instance-action.ts";
import { listInstances } from "../../fleet/instances/list-instances.ts";
import { ActionConfirm, CONFIRMED_ACTIONS, OPERATOR_ACTIONS, offeredActions } from "./instance-actions.tsx";
import { agentPath } from "../shell/agent-links.ts";
import { frameFor, sendPage } from "../shell/render.tsx";
import { selectedAgentId } from "../shell/selected-agent.tsx";

type Ctx = Context<AppEnv>;

const instanceActionForm = z.object({
  kind: z.enum(OPERATOR_ACTIONS, `must be one of ${OPERATOR_ACTIONS.join(", ")}`),
  nonce: z.string().regex(/^[\w-]{8,64}$/, "must be 8-64 word characters"),
  confirm: z.literal("yes", "must be yes").optional(),
});

const ACTION_NOTICES = {
  succeeded: "action-succeeded",
  failed: "action-failed",
  awaiting_approval: "action-awaiting-approval",
  rate_limited: "action-failed",
  proposed: "action-proposed",
  refused: "action-failed",
} as const;

const instancePath = (c: Ctx, id: string, done: string) =>
  c.redirect(agentPath(`/fleet/${encodeURIComponent(id)}?done=${done}`, selectedAgentId(c)), 303);

export async function postInstanceAction(c: Ctx) {
  const deps = c.get("deps");
  const instanceId = c.req.param("instanceId") ?? "";
  const parsed = instanceActionForm.safeParse(await c.req.parseBody());
  if (!parsed.success) throw new RequestError(400, `invalid form: ${describeIssues(parsed.error.issues)}`);
  const { kind, nonce, confirm } = parsed.data;
  if (!offeredActions(deps.provider.capabilities).includes(kind))
    throw new RequestError(400, `invalid form: kind: the ${deps.provider.kind} provider cannot ${kind}`);
  const agentId = selectedAgentId(c);
  if (CONFIRMED_ACTIONS.has(kind) && confirm !== "yes") {
    const instance = (await listInstances(deps, agentId)).find((i) => i.id === instanceId && !i.gone);
    if (!instance) throw new RequestError(404, `unknown instance: ${instanceId}`);
    const frame = await frameFor(c);
    return sendPage(
      c,
      { title: `Confirm: ${kind} ${instanceId}`, current: "fleet", frame },
      <ActionConfirm
        instance={instance}
        kind={kind}
        provider={deps.provider.kind}
        csrf={frame.csrf}
        nonce={nonce}
        approvalRequired={deps.config.approvalRequired.includes(kind)}
      />,
    );
  }
  const result = await operatorInstanceAction(deps, c.get("operator"), {
    agentId,
    instanceId,
    kind,
    idempotencyKey: `dashboard:${nonce}`,
    via: "dashboard",
  });
  return instancePath(c, instanceId, ACTION_NOTICES[result.status]);
}

const blockIdParam = z.coerce.number().int().positive();

export async function postLiftBlock(c: Ctx) {
  const id = blockIdParam.safeParse(c.req.param("blockId"));
  if (!id.success) throw new RequestError(400, "invalid block id: must be a positive integer");
  const block = await liftBlockAsOperator(c.get("deps"), c.get("operator"), selectedAgentId(c), id.data);
  return instancePath(c, block.instanceId, "block-lifted");
}
