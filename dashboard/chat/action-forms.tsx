/**
 * The operator's buttons: Trigger now (a manual inbox event) and Reset session. Reset asks for
 * confirmation and says what it keeps: with JavaScript as a dialog, without it as a page.
 */
import { CsrfField } from "../shell/layout.tsx";

export const RESET_KEEPS =
  "Reset starts a new conversation: the agent stops seeing this session's chat history and summary. " +
  "It keeps the run counter, wakes, scheduled runs, instances, actions, approvals, notifications and pinned memory " +
  '(unless "also clear memory" is ticked), and the agent keeps working.';

export function TriggerForm({ csrf, back }: { csrf: string; back: string }) {
  return (
    <form method="post" action="/trigger">
      <CsrfField token={csrf} />
      <input type="hidden" name="back" value={back} />
      <input type="hidden" name="nonce" value={crypto.randomUUID()} />
      <button type="submit">Trigger now</button>
    </form>
  );
}

export function ResetForm({ csrf, confirmed = false }: { csrf: string; confirmed?: boolean }) {
  return (
    <form method="post" action="/session/reset" data-confirm={confirmed ? undefined : `${RESET_KEEPS} Reset the session now?`}>
      <CsrfField token={csrf} />
      <input type="hidden" name="confirmed" value={confirmed ? "yes" : ""} />
      <label>
        <input type="checkbox" name="clearMemory" value="yes" /> also clear memory
      </label>
      <button type="submit" class={confirmed ? "danger" : "secondary"}>
        {confirmed ? "Yes, reset the session" : "Reset session…"}
      </button>
    </form>
  );
}
