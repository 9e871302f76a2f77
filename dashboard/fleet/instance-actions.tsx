/**
 * The operator's own actions on an instance (its page): start, stop, reboot, destroy and, on a
 * provider that can create instances, replace. Only the kinds the provider has are offered
 * (`provider.capabilities`). They go through the same audit as the agent's, and the approval
 * rules still hold: a kind listed in APPROVAL_REQUIRED_ACTIONS becomes a pending approval
 * (requested by a human) to confirm on the Approvals page. The destructive kinds need a second,
 * explicit post: the first renders `ActionConfirm` (what will happen to which instance, at what
 * price) and does nothing.
 */
import type { Capability, ProviderKind } from "../../fleet/providers/provider.ts";
import type { InstanceView } from "../../fleet/instances/list-instances.ts";
import { dollarsPerHour } from "../shell/format.ts";
import { gpu } from "./fleet.tsx";
import { CsrfField } from "../shell/layout.tsx";

export const OPERATOR_ACTIONS = ["start", "stop", "reboot", "destroy", "replace"] as const;
export type OperatorAction = (typeof OPERATOR_ACTIONS)[number];

/** Kinds whose first post only asks: the second, with `confirm=yes`, acts. */
export const CONFIRMED_ACTIONS: ReadonlySet<OperatorAction> = new Set(["stop", "reboot", "destroy", "replace"]);

/** The capability each kind needs: replace rents a new instance, so it needs `create`. */
const NEEDS: Record<OperatorAction, Capability> = { start: "start", stop: "stop", reboot: "reboot", destroy: "destroy", replace: "create" };

export const offeredActions = (capabilities: ReadonlySet<Capability>) => OPERATOR_ACTIONS.filter((kind) => capabilities.has(NEEDS[kind]));

const actionUrl = (instance: InstanceView) => `/fleet/${encodeURIComponent(instance.id)}/actions`;

export function InstanceActionsForm(props: {
  instance: InstanceView;
  csrf: string;
  approvalRequired: readonly string[];
  offered: readonly OperatorAction[];
}) {
  const { instance, offered } = props;
  if (offered.length === 0) return null;
  const id = `action-${instance.id}`;
  return (
    <form method="post" action={actionUrl(instance)} class="inline-form thumb">
      <CsrfField token={props.csrf} />
      <input type="hidden" name="nonce" value={crypto.randomUUID()} />
      <label for={id}>Action</label>
      <select id={id} name="kind">
        {offered.map((kind) => (
          <option value={kind}>{props.approvalRequired.includes(kind) ? `${kind} (needs approval)` : kind}</option>
        ))}
      </select>
      <button type="submit" class="secondary small">
        Take action
      </button>
    </form>
  );
}

/** What the kind does to the instance, in words, with the provider's own risk named. */
export function consequences(kind: OperatorAction, provider: ProviderKind): string[] {
  switch (kind) {
    case "stop":
      return [
        "It stops: its processes end; its disk is kept and billed as storage.",
        ...(provider === "vast"
          ? ["A stopped Vast.ai instance may lose its GPU to another renter: starting it again can wait until the GPU is free."]
          : []),
      ];
    case "reboot":
      return ["It restarts: running processes end and the container starts again."];
    case "destroy":
      return ["It is destroyed: its disk is deleted and cannot be recovered, and it stops costing anything."];
    case "replace":
      return [
        "A like-for-like instance is rented on another machine, and this one is destroyed once the new one runs: its disk is deleted.",
      ];
    case "start":
      return ["It starts."];
  }
}

export function ActionConfirm(props: {
  instance: InstanceView;
  kind: OperatorAction;
  provider: ProviderKind;
  csrf: string;
  nonce: string;
  approvalRequired: boolean;
}) {
  const { instance: i, kind } = props;
  return (
    <section class="panel" aria-labelledby="confirm-heading">
      <h2 id="confirm-heading">{`${kind[0]!.toUpperCase()}${kind.slice(1)} ${i.id}?`}</h2>
      <dl class="facts">
        <dt>Instance</dt>
        <dd>{i.label ? `${i.label} (${i.id})` : i.id}</dd>
        <dt>State</dt>
        <dd>{i.state}</dd>
        <dt>GPU</dt>
        <dd>{gpu(i)}</dd>
        <dt>Costs now</dt>
        <dd>{dollarsPerHour(i.costPerHour)}</dd>
      </dl>
      <ul data-testid="consequences">
        {consequences(kind, props.provider).map((line) => (
          <li>{line}</li>
        ))}
        {props.approvalRequired ? (
          <li>{`${kind} needs approval (APPROVAL_REQUIRED_ACTIONS): confirming files an approval request; nothing reaches the provider until it is approved.`}</li>
        ) : null}
      </ul>
      <p>Nothing has been done yet.</p>
      <form method="post" action={actionUrl(i)} class="actions thumb">
        <CsrfField token={props.csrf} />
        <input type="hidden" name="nonce" value={props.nonce} />
        <input type="hidden" name="kind" value={kind} />
        <input type="hidden" name="confirm" value="yes" />
        <button type="submit" class="danger">{`Yes, ${kind} ${i.id}`}</button>
        <a href={`/fleet/${encodeURIComponent(i.id)}`}>Cancel</a>
      </form>
    </section>
  );
}
