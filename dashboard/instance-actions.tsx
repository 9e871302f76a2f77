/**
 * The operator's own actions on an instance (its page): start, stop, reboot, destroy. They go
 * through the same audit as the agent's, and the approval rules still hold: a kind listed in
 * APPROVAL_REQUIRED_ACTIONS becomes a pending approval (requested by a human) to confirm on the
 * Approvals page, instead of calling the provider at once.
 */
import type { InstanceView } from "../fleet/list-instances.ts";
import { CsrfField } from "./layout.tsx";

export const OPERATOR_ACTIONS = ["start", "stop", "reboot", "destroy"] as const;

export function InstanceActionsForm({ instance, csrf, approvalRequired }: { instance: InstanceView; csrf: string; approvalRequired: readonly string[] }) {
  const id = `action-${instance.id}`;
  return (
    <form method="post" action={`/fleet/${encodeURIComponent(instance.id)}/actions`} class="inline-form">
      <CsrfField token={csrf} />
      <input type="hidden" name="nonce" value={crypto.randomUUID()} />
      <label for={id}>Action</label>
      <select id={id} name="kind">
        {OPERATOR_ACTIONS.map((kind) => (
          <option value={kind}>{approvalRequired.includes(kind) ? `${kind} (needs approval)` : kind}</option>
        ))}
      </select>
      <button type="submit" class="secondary small">
        Take action
      </button>
    </form>
  );
}
