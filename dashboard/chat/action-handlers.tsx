/**
 * The operator's form posts (already origin- and CSRF-checked by the routes): Trigger now and
 * chat become inbox events through the API's own ingestion (auth/operator-input.ts: the activity
 * row in the event's batch), reset starts a new epoch, approval decisions go to the fleet's
 * decideApproval, and a simulated failure goes to the simulator as its API route's does. Each acts
 * on the selected agent (selected-agent.tsx; an archived one was refused before this) and answers
 * with a redirect back to that agent's page (post/redirect/get), so a reload never re-submits;
 * the hidden nonce makes a double-clicked form one event.
 */
import type { Context } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../jobs/app-env.ts";
import { RequestError } from "../../jobs/errors.ts";
import { recordActivity } from "../../auth/activity.ts";
import { ingestOperatorInput } from "../../auth/operator-input.ts";
import { decideApproval } from "../../fleet/actions/approvals.ts";
import { FAILURE_KINDS } from "../../fleet/providers/simulator.ts";
import { injectFailureOrRefuse } from "../../jobs/inject-failure.ts";
import { resetAgentSession } from "../../jobs/reset-agent-session.ts";
import { chatPage } from "../page-handlers.tsx";
import { sendPage } from "../shell/render.tsx";
import { ResetConfirmPage } from "./reset-confirm.tsx";
import { agentPath } from "../shell/agent-links.ts";
import { selectedAgentId } from "../shell/selected-agent.tsx";
import { csrfToken, safeNext } from "../sign-in/session.ts";
import { describeIssues, refuseControlCharacters } from "../../jobs/validate.ts";
import { plainText } from "../../runtime/plain-text.ts";

type Ctx = Context<AppEnv>;

const nonce = z.string().regex(/^[\w-]{8,64}$/, "must be 8-64 word characters");
const triggerForm = z.object({ back: z.string().optional(), nonce: nonce.optional() });
const chatForm = z.object({
  text: plainText(z.string().trim().min(1, "must not be empty").max(8000, "must be at most 8000 characters")),
  nonce: nonce.optional(),
});
const decisionForm = z.object({
  decision: z.enum(["approve", "reject"], "must be approve or reject"),
  note: z.string().trim().max(500, "must be at most 500 characters").optional(),
});
const approvalIdParam = z.coerce.number().int().positive();
const failureForm = z.object({
  kind: z.enum(FAILURE_KINDS, `must be one of ${FAILURE_KINDS.join(", ")}`),
  back: z.string().optional(),
});

async function form<T extends z.ZodType>(c: Ctx, schema: T): Promise<z.infer<T>> {
  const parsed = schema.safeParse(await c.req.parseBody());
  if (!parsed.success) throw new RequestError(400, `invalid form: ${describeIssues(parsed.error.issues)}`);
  refuseControlCharacters("form", parsed.data);
  return parsed.data;
}

/** Back to `path` on the selected agent, with the notice `done`. */
const backTo = (c: Ctx, path: string, done: string) =>
  c.redirect(agentPath(`${path}${path.includes("?") ? "&" : "?"}done=${done}`, selectedAgentId(c)), 303);

export async function postTrigger(c: Ctx) {
  const { back, nonce: key } = await form(c, triggerForm);
  const { duplicate } = await ingestOperatorInput(c.get("deps"), c.get("operator"), {
    action: "trigger",
    agentId: selectedAgentId(c),
    key: `dashboard-${key ?? crypto.randomUUID()}`,
    reason: "Trigger now (dashboard)",
  });
  return backTo(c, safeNext(back), duplicate ? "duplicate" : "triggered");
}

export async function postChat(c: Ctx) {
  const parsed = chatForm.safeParse(await c.req.parseBody());
  if (!parsed.success) {
    const typed = (await c.req.parseBody()).text;
    return chatPage(c, `The message was not sent: ${describeIssues(parsed.error.issues)}.`, {
      status: 400,
      text: typeof typed === "string" ? typed : "",
    });
  }
  const { duplicate } = await ingestOperatorInput(c.get("deps"), c.get("operator"), {
    action: "message",
    agentId: selectedAgentId(c),
    key: `dashboard-${parsed.data.nonce ?? crypto.randomUUID()}`,
    text: parsed.data.text,
  });
  return backTo(c, "/chat", duplicate ? "duplicate" : "sent");
}

/** Without `confirmed=yes` (no JavaScript dialog ran) this shows the confirmation page instead. */
export async function postReset(c: Ctx) {
  const body = await c.req.parseBody();
  if (body.confirmed !== "yes") {
    return sendPage(c, { title: "Reset the session?", current: "overview" }, <ResetConfirmPage csrf={await csrfToken(c)} />);
  }
  const clearMemory = body.clearMemory === "yes";
  await resetAgentSession(c.get("deps"), c.get("operator"), selectedAgentId(c), clearMemory);
  return backTo(c, "/", clearMemory ? "reset-memory" : "reset");
}

export async function postDecision(c: Ctx) {
  const id = approvalIdParam.safeParse(c.req.param("approvalId"));
  if (!id.success) throw new RequestError(400, "invalid approval id: must be a positive integer");
  const { decision, note } = await form(c, decisionForm);
  const who = c.get("operator");
  const agentId = selectedAgentId(c);
  await decideApproval(c.get("deps"), agentId, id.data, decision, note || undefined, who.name);
  await recordActivity(c.get("deps").db, who, { action: decision, agentId, subject: id.data, at: c.get("deps").clock.now() });
  return backTo(c, "/approvals", decision === "approve" ? "approved" : "rejected");
}

/**
 * Simulator only: the instance fails as the simulator's scripted failures do, and reports it. An
 * instance outside the selected agent's instance filter is not its to break (404).
 */
export async function postFailure(c: Ctx) {
  const instanceId = c.req.param("instanceId") ?? "";
  const { kind, back } = await form(c, failureForm);
  const { provider } = c.get("deps");
  if (provider.kind === "simulator" && !(await provider.get(instanceId)))
    throw new RequestError(404, `unknown simulated instance: ${instanceId}`);
  await injectFailureOrRefuse(c.get("deps"), instanceId, kind);
  return backTo(c, safeNext(back ?? "/fleet"), "failure-injected");
}
